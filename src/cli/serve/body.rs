//! A request's body read whole, then answered a part at a time: frames
//! taken in as they come (each within the idle timeout), decoded and cut
//! into parts of whole lines by the library ([`BodyParts`]) and kept in a
//! [`Spool`] (memory, then an unnamed temporary file), so that nothing is
//! admitted from a body that does not arrive whole, and most clients
//! (curl, Python's, ureq) send their whole body before they read; then the
//! answers are sent back as they are made, in a chunked response whose
//! channel holds one part: a client that does not read stops the answering.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::{Bytes, Frame, Incoming};
use hyper::header::{CONTENT_ENCODING, HeaderMap};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};
use urinorm::escape::escape_str;
use urinorm::service::{BodyError, BodyParts, Encoding};

/// Decoded bytes a part is cut at: the memory of a body being answered is
/// a few of these, whatever its size.
pub const WINDOW: usize = 1 << 20;

/// Why a body was not read to its end.
pub enum Unread {
    /// No bytes came within the idle timeout.
    Slow,
    /// The connection broke.
    Broken,
    Body(BodyError),
}

impl Unread {
    pub fn sentence(&self) -> String {
        match self {
            Unread::Slow => "the body came too slowly".into(),
            Unread::Broken => "the body could not be read".into(),
            Unread::Body(e) => e.to_string(),
        }
    }
}

/// The encoding a request's `Content-Encoding` names, or what to say of
/// one that is not taken (415).
pub fn encoding(headers: &HeaderMap) -> Result<Encoding, String> {
    let Some(value) = headers.get(CONTENT_ENCODING) else {
        return Ok(Encoding::Identity);
    };
    let name = value.to_str().unwrap_or("").trim().to_ascii_lowercase();
    match name.as_str() {
        "" | "identity" => Ok(Encoding::Identity),
        "gzip" | "x-gzip" => Ok(Encoding::Gzip),
        "zstd" => Ok(Encoding::Zstd),
        _ => Err(format!(
            "Content-Encoding '{}' is not taken: send the body plain, gzip or zstd",
            escape_str(&String::from_utf8_lossy(value.as_bytes()))
        )),
    }
}

/// A body being read.
pub struct Reading {
    body: Incoming,
    parts: BodyParts,
    idle: Duration,
    ended: bool,
}

impl Reading {
    pub fn new(body: Incoming, parts: BodyParts, idle: Duration) -> Reading {
        Reading {
            body,
            parts,
            idle,
            ended: false,
        }
    }

    /// The next part of the body, `None` past its end.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, Unread> {
        loop {
            if let Some(part) = self.parts.next_part() {
                return Ok(Some(part));
            }
            if self.ended {
                return Ok(None);
            }
            match tokio::time::timeout(self.idle, self.body.frame()).await {
                Err(_) => return Err(Unread::Slow),
                Ok(Some(Err(_))) => return Err(Unread::Broken),
                Ok(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        self.parts.feed(&data).map_err(Unread::Body)?;
                    }
                }
                Ok(None) => {
                    self.ended = true;
                    return self.parts.finish().map_err(Unread::Body);
                }
            }
        }
    }
}

/// Bytes of a body's parts kept in memory; past them, the parts go to a
/// temporary file.
pub const SPOOL_MEMORY: usize = 4 << 20;

/// The parts of a body being read, kept until it has been read whole.
#[derive(Default)]
pub struct Spool {
    parts: VecDeque<Kept>,
    memory: usize,
    file: Option<tokio::fs::File>,
    /// Whether the parts are being given back (the file read from its start).
    giving: bool,
}

enum Kept {
    Memory(Vec<u8>),
    /// Its length, in the file after the parts before it.
    File(usize),
}

impl Spool {
    /// Keeps `part`, in memory while there is room, else in the file.
    pub async fn keep(&mut self, part: Vec<u8>) -> io::Result<()> {
        if self.memory + part.len() <= SPOOL_MEMORY {
            self.memory += part.len();
            self.parts.push_back(Kept::Memory(part));
            return Ok(());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => {
                let file = tokio::task::spawn_blocking(tempfile::tempfile)
                    .await
                    .map_err(io::Error::other)??;
                self.file.insert(tokio::fs::File::from_std(file))
            }
        };
        file.write_all(&part).await?;
        self.parts.push_back(Kept::File(part.len()));
        Ok(())
    }

    /// Whether every part has been given back.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The next part kept, in order.
    pub async fn next(&mut self) -> io::Result<Option<Vec<u8>>> {
        if !self.giving {
            self.giving = true;
            if let Some(file) = &mut self.file {
                file.flush().await?;
                file.seek(io::SeekFrom::Start(0)).await?;
            }
        }
        match self.parts.pop_front() {
            None => Ok(None),
            Some(Kept::Memory(part)) => Ok(Some(part)),
            Some(Kept::File(len)) => {
                let mut part = vec![0; len];
                let file = self.file.as_mut().expect("a part kept in the file");
                file.read_exact(&mut part).await?;
                Ok(Some(part))
            }
        }
    }
}

/// A response body of answers sent as they are made; an error ends it
/// without its last chunk, so the client sees it cut, never complete.
pub struct Streamed(pub tokio::sync::mpsc::Receiver<Result<Bytes, io::Error>>);

impl hyper::body::Body for Streamed {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|next| next.map(|part| part.map(Frame::data)))
    }
}
