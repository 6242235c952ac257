//! A request body taken in as it arrives, a bounded window at a time:
//! decoded (gzip, zstd or as it is), and cut into parts of whole lines for
//! [`Service::answer_part`](super::Service::answer_part), so that a body's
//! memory is a window's, whatever its size.
//!
//! It knows bytes, lines and two compressions; not HTTP, sockets or keys.

use std::io::Write;

/// How a body's bytes are encoded (HTTP's `Content-Encoding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    /// gzip, one member or several (RFC 1952).
    Gzip,
    /// zstd frames (RFC 8878).
    Zstd,
}

/// Why a body could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum BodyError {
    /// Its decoded bytes passed the largest body taken.
    TooLarge { max: u64 },
    /// It is not what its encoding says: the decoder's reason.
    Undecodable { encoding: Encoding, why: String },
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::TooLarge { max } => {
                write!(f, "the body is larger than --max-body ({max} bytes)")
            }
            BodyError::Undecodable { encoding, why } => {
                let name = match encoding {
                    Encoding::Identity => "plain",
                    Encoding::Gzip => "gzip",
                    Encoding::Zstd => "zstd",
                };
                write!(f, "the body is not valid {name}: {why}")
            }
        }
    }
}

impl std::error::Error for BodyError {}

enum Decoder {
    Identity,
    Gzip(Box<flate2::write::MultiGzDecoder<Vec<u8>>>),
    /// zstd's own streaming decoder, which says when a frame has ended
    /// (its write adapter would take a body cut inside a frame for whole).
    Zstd {
        raw: Box<zstd::stream::raw::Decoder<'static>>,
        out: Vec<u8>,
        in_frame: bool,
    },
    /// zstd's context could not be made (memory): every body is refused.
    Unusable(String),
}

/// Encoded bytes handed to a decoder at once: what one hand-over may
/// expand to is bounded (deflate expands at most about 1,000 times).
const FEED_BYTES: usize = 1024;

/// A body being taken in: see the module's comment.
///
/// ```
/// use urinorm::service::{BodyParts, Encoding};
/// let mut body = BodyParts::new(Encoding::Identity, 8, 100, u64::MAX);
/// body.feed(b"http://a/\nhttp://b/\nhttp://c")?;
/// assert_eq!(body.next_part().unwrap(), b"http://a/\nhttp://b/\n");
/// assert_eq!(body.next_part(), None);
/// assert_eq!(body.finish()?.unwrap(), b"http://c");
/// # Ok::<(), urinorm::service::BodyError>(())
/// ```
pub struct BodyParts {
    decoder: Decoder,
    encoding: Encoding,
    /// Decoded bytes not yet handed out as a part.
    held: Vec<u8>,
    /// A part is handed out once this many bytes are held.
    window: usize,
    /// A line longer than this is kept only to this length and one byte
    /// more (the rest is dropped): it is rejected all the same.
    max_line_bytes: usize,
    /// Dropping the rest of a line too long, until its line feed.
    skipping: bool,
    /// The bytes held of the line not yet ended.
    line_len: usize,
    max_body: u64,
    /// Decoded bytes so far.
    decoded: u64,
}

impl BodyParts {
    /// A body of `encoding`, handed out in parts of at least `window`
    /// bytes (but the last), lines longer than `max_line_bytes` cut, more
    /// than `max_body` decoded bytes refused.
    pub fn new(
        encoding: Encoding,
        window: usize,
        max_line_bytes: usize,
        max_body: u64,
    ) -> BodyParts {
        let decoder = match encoding {
            Encoding::Identity => Decoder::Identity,
            Encoding::Gzip => {
                Decoder::Gzip(Box::new(flate2::write::MultiGzDecoder::new(Vec::new())))
            }
            Encoding::Zstd => match zstd::stream::raw::Decoder::new() {
                Ok(raw) => Decoder::Zstd {
                    raw: Box::new(raw),
                    out: vec![0; FEED_BYTES * 64],
                    in_frame: false,
                },
                Err(e) => Decoder::Unusable(e.to_string()),
            },
        };
        BodyParts {
            decoder,
            encoding,
            held: Vec::new(),
            window: window.max(1),
            max_line_bytes,
            skipping: false,
            line_len: 0,
            max_body,
            decoded: 0,
        }
    }

    /// Takes in bytes of the body, as they came.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), BodyError> {
        let encoding = self.encoding;
        for piece in bytes.chunks(FEED_BYTES) {
            match &mut self.decoder {
                Decoder::Identity => self.take(piece)?,
                Decoder::Gzip(d) => {
                    let written = d.write_all(piece).map(|()| std::mem::take(d.get_mut()));
                    let mut decoded =
                        written.map_err(|e| undecodable(self.encoding, e.to_string()))?;
                    self.take(&decoded)?;
                    decoded.clear();
                    if let Decoder::Gzip(d) = &mut self.decoder {
                        // Its buffer back, emptied, to fill again.
                        *d.get_mut() = decoded;
                    }
                }
                Decoder::Zstd { .. } => self.feed_zstd(piece)?,
                Decoder::Unusable(why) => return Err(undecodable(encoding, why.clone())),
            }
        }
        Ok(())
    }

    /// Runs zstd's decoder over `piece`, taking in what it gives.
    fn feed_zstd(&mut self, piece: &[u8]) -> Result<(), BodyError> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let mut input = InBuffer::around(piece);
        loop {
            let Decoder::Zstd { raw, out, in_frame } = &mut self.decoder else {
                unreachable!("fed to zstd only");
            };
            let mut output = OutBuffer::around(&mut out[..]);
            let hint = raw.run(&mut input, &mut output);
            let (made, full) = (output.pos(), output.pos() == out.len());
            // 0: a frame has just ended.
            *in_frame = hint.as_ref().is_ok_and(|&h| h != 0);
            let decoded = std::mem::take(out);
            let taken = hint
                .map_err(|e| undecodable(self.encoding, e.to_string()))
                .and_then(|_| self.take(&decoded[..made]));
            if let Decoder::Zstd { out, .. } = &mut self.decoder {
                *out = decoded;
            }
            taken?;
            // Done with the piece once it is read and nothing more is held.
            if input.pos() == piece.len() && !full {
                return Ok(());
            }
        }
    }

    /// Holds decoded bytes, the rest of a line too long dropped.
    fn take(&mut self, mut bytes: &[u8]) -> Result<(), BodyError> {
        self.decoded += bytes.len() as u64;
        if self.decoded > self.max_body {
            return Err(BodyError::TooLarge { max: self.max_body });
        }
        while !bytes.is_empty() {
            let newline = memchr::memchr(b'\n', bytes);
            if self.skipping {
                let Some(at) = newline else {
                    return Ok(());
                };
                self.skipping = false;
                self.line_len = 0;
                self.held.push(b'\n');
                bytes = &bytes[at + 1..];
                continue;
            }
            let room = (self.max_line_bytes + 1).saturating_sub(self.line_len);
            match newline {
                Some(at) if at <= room => {
                    self.held.extend_from_slice(&bytes[..=at]);
                    self.line_len = 0;
                    bytes = &bytes[at + 1..];
                }
                None if bytes.len() <= room => {
                    self.held.extend_from_slice(bytes);
                    self.line_len += bytes.len();
                    bytes = &[];
                }
                _ => {
                    // Kept to its length at most and a byte more.
                    self.held.extend_from_slice(&bytes[..room]);
                    self.line_len += room;
                    self.skipping = true;
                    bytes = &bytes[room..];
                }
            }
        }
        Ok(())
    }

    /// The next part, once a window's worth of whole lines is held: its
    /// lines, each with its line feed.
    pub fn next_part(&mut self) -> Option<Vec<u8>> {
        if self.held.len() < self.window {
            return None;
        }
        let end = memchr::memrchr(b'\n', &self.held)? + 1;
        let rest = self.held.split_off(end);
        Some(self.hand_out(rest))
    }

    /// The body's end: the decoder finished, and what is held (the last
    /// line may have no line feed), if anything. A body that ends inside a
    /// gzip member or a zstd frame is undecodable, never taken as shorter.
    pub fn finish(&mut self) -> Result<Option<Vec<u8>>, BodyError> {
        let encoding = self.encoding;
        match &mut self.decoder {
            Decoder::Identity => {}
            Decoder::Gzip(d) => {
                let finished = d.try_finish().map(|()| std::mem::take(d.get_mut()));
                let decoded = finished.map_err(|e| undecodable(self.encoding, e.to_string()))?;
                self.take(&decoded)?;
            }
            Decoder::Zstd { in_frame: true, .. } => {
                return Err(undecodable(
                    self.encoding,
                    "the body ends inside a frame".into(),
                ));
            }
            Decoder::Zstd { .. } => {}
            Decoder::Unusable(why) => return Err(undecodable(encoding, why.clone())),
        }
        Ok((!self.held.is_empty()).then(|| self.hand_out(Vec::new())))
    }

    fn hand_out(&mut self, rest: Vec<u8>) -> Vec<u8> {
        std::mem::replace(&mut self.held, rest)
    }
}

/// Why a body of `encoding` could not be decoded.
fn undecodable(encoding: Encoding, why: String) -> BodyError {
    BodyError::Undecodable { encoding, why }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part `bytes` gives fed `step` bytes at a time.
    fn parts(
        encoding: Encoding,
        bytes: &[u8],
        step: usize,
        window: usize,
        max_line: usize,
    ) -> Vec<Vec<u8>> {
        let mut body = BodyParts::new(encoding, window, max_line, u64::MAX);
        let mut parts = Vec::new();
        for piece in bytes.chunks(step) {
            body.feed(piece).unwrap();
            parts.extend(std::iter::from_fn(|| body.next_part()));
        }
        parts.extend(body.finish().unwrap());
        parts
    }

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("http://h{i}.example/p\n").into_bytes())
            .collect()
    }

    #[test]
    fn parts_are_whole_lines_that_join_to_the_body() {
        let body = lines(1000);
        for (step, window) in [(1, 1), (7, 100), (4096, 1000), (100_000, 1 << 20)] {
            let parts = parts(Encoding::Identity, &body, step, window, 1000);
            assert_eq!(parts.concat(), body, "{step} {window}");
            assert!(parts.iter().all(|p| p.ends_with(b"\n")));
            // At least a window, less the line that did not end in it.
            let line = 25;
            assert!(
                parts[..parts.len() - 1]
                    .iter()
                    .all(|p| p.len() + line >= window)
            );
        }
        let last = parts(Encoding::Identity, b"a\nb", 1, 1, 10);
        assert_eq!(last, [b"a\n".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn a_line_too_long_is_cut_to_one_byte_past_the_limit() {
        let body = [&b"short\n"[..], &[b'x'; 5000], b"\nnext\n"].concat();
        for step in [1, 3, 64, 10_000] {
            let joined = parts(Encoding::Identity, &body, step, 16, 100).concat();
            let expected = [&b"short\n"[..], &[b'x'; 101], b"\nnext\n"].concat();
            assert_eq!(joined, expected, "{step}");
        }
    }

    #[test]
    fn gzip_and_zstd_bodies_decode_to_the_same_parts() {
        let body = lines(20_000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&body[..1000]).unwrap();
        let mut gzip = gz.finish().unwrap();
        // A second member, as `cat a.gz b.gz` makes.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&body[1000..]).unwrap();
        gzip.extend(gz.finish().unwrap());
        let zstd = zstd::encode_all(&body[..], 3).unwrap();
        for (encoding, bytes) in [(Encoding::Gzip, gzip), (Encoding::Zstd, zstd)] {
            for step in [1, 333, 1 << 20] {
                let parts = parts(encoding, &bytes, step, 4096, 1000);
                assert_eq!(parts.concat(), body, "{encoding:?} {step}");
            }
        }
    }

    #[test]
    fn bad_encodings_and_large_bodies_are_refused() {
        let mut body = BodyParts::new(Encoding::Gzip, 16, 100, u64::MAX);
        let e = body
            .feed(b"not gzip at all")
            .and_then(|()| body.finish().map(drop));
        assert!(matches!(e, Err(BodyError::Undecodable { .. })), "{e:?}");
        let mut cut = BodyParts::new(Encoding::Zstd, 16, 100, u64::MAX);
        let zstd = zstd::encode_all(&lines(100)[..], 3).unwrap();
        let e = cut
            .feed(&zstd[..zstd.len() / 2])
            .and_then(|()| cut.finish().map(drop));
        assert!(
            e.is_err() || cut.decoded < lines(100).len() as u64,
            "a cut frame is no whole body"
        );
        let mut large = BodyParts::new(Encoding::Identity, 16, 100, 10);
        assert_eq!(
            large.feed(b"http://a/\nhttp://b/\n"),
            Err(BodyError::TooLarge { max: 10 })
        );
    }
}
