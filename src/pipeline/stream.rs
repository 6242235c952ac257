//! Streams: standard input, pipes, and compressed files, read on a thread
//! of their own that hands the chunker blocks of whole lines, so that
//! reading and decompressing overlap the work on the lines.
//!
//! A stream's format is told by its first bytes, never by a file's name:
//! gzip (every member of a multi-member file), zstd (every frame) and bzip2
//! (every stream) are decompressed; anything else is read as it is. The
//! thread counts the stream's own bytes (compressed ones, when it is
//! compressed) for the progress bar, and names the byte where damaged
//! compressed data stops decoding. What was decoded before damage is
//! handed over (its whole lines); bytes after the last member that start
//! no other are told apart from damage, and every line before them is
//! read, as gzip does.
//!
//! It knows bytes, formats and newlines; nothing of what a line holds.

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;
use std::sync::mpsc;

use memchr::memrchr;

pub use super::format::Format;
use super::format::{MAGIC_BYTES, Sniffed, sniff};
use super::input_error::{InputError, Problem};

/// Where a stream comes from.
pub(crate) type Source = Box<dyn Read + Send>;

/// What the reading thread hands over: whole lines (a last line without
/// its newline, at the end), and how many of the stream's own bytes were
/// read for them.
pub(crate) struct Block {
    pub(crate) bytes: Vec<u8>,
    pub(crate) read: u64,
}

/// The blocks of a stream, in order, ending at its end or at an error.
pub(crate) type Blocks = mpsc::Receiver<Result<Block, InputError>>;

/// How the reading thread hands blocks over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// About `n` bytes at a time: for bulk work.
    Chunks(usize),
    /// The lines of each read as soon as it returns: for a coprocess.
    AsRead,
}

/// Blocks a reading thread may have ready before the chunker takes them:
/// enough to keep decompression going while a batch is mapped.
const BLOCKS_AHEAD: usize = 8;

/// How much a line-buffered read asks for at a time.
const READ_BYTES: usize = 64 << 10;

/// The buffer between a compressed file and its decoder: large enough
/// that refilling it costs nothing, small enough that damage is named
/// within it.
const COMPRESSED_BUFFER_BYTES: usize = 64 << 10;

/// Starts the thread that reads `source` (named `name` in messages) and
/// hands over its lines as `delivery` says. The thread stops at the end of
/// the stream, at an error (handed over), or when nobody takes its blocks.
pub(crate) fn spawn(name: String, source: Source, delivery: Delivery) -> Blocks {
    let (sender, receiver) = mpsc::sync_channel(BLOCKS_AHEAD);
    std::thread::spawn(move || {
        let fail = |problem| InputError::with_problem(&name, problem);
        let sent = match open(source) {
            Ok(mut stream) => {
                read_lines(&mut stream, delivery, &sender).map_err(|p| stream.problem(p))
            }
            Err(problem) => Err(Some(problem)),
        };
        if let Err(Some(problem)) = sent {
            let _ = sender.send(Err(fail(problem)));
        }
    });
    receiver
}

/// A stream, decompressed when it is compressed, that counts its own bytes.
struct Stream {
    reader: Box<dyn Read>,
    format: Option<Format>,
    tally: Rc<Tally>,
    /// Bytes of the stream counted as handed over.
    reported: u64,
}

impl Stream {
    /// Bytes of the stream read since the last call.
    fn newly_read(&mut self) -> u64 {
        let used = self.tally.used.get();
        let new = used - self.reported;
        self.reported = used;
        new
    }

    /// What an error reading the stream means: the stream's own failure,
    /// or damage its decoder found at the byte it had reached.
    fn problem(&self, error: Option<io::Error>) -> Option<Problem> {
        let error = error?;
        if let (Some(format), Some(trailing)) = (self.format, TrailingBytes::of(&error)) {
            return Some(Problem::Trailing {
                format,
                at: self.tally.used.get() - trailing.0,
                bytes: trailing.0,
            });
        }
        Some(match self.format {
            Some(format) if !self.tally.source_failed.get() => Problem::Damaged {
                format,
                at: self.tally.used.get(),
                cut_short: error.kind() == io::ErrorKind::UnexpectedEof,
                detail: error.to_string(),
            },
            _ => Problem::Io(error),
        })
    }
}

/// What a [`Counted`] reader has seen (shared with its [`Stream`], on the
/// reading thread).
#[derive(Default)]
struct Tally {
    /// Bytes of the source used by the reader's consumer.
    used: Cell<u64>,
    /// Whether the source itself failed (not the decoder reading it).
    source_failed: Cell<bool>,
}

/// The source, buffered, counting the bytes its consumer uses.
struct Counted<R> {
    inner: BufReader<R>,
    tally: Rc<Tally>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let tally = &self.tally;
        let read = self
            .inner
            .read(buf)
            .inspect_err(|_| tally.source_failed.set(true))?;
        tally.used.set(tally.used.get() + read as u64);
        Ok(read)
    }
}

impl<R: Read> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let tally = &self.tally;
        self.inner
            .fill_buf()
            .inspect_err(|_| tally.source_failed.set(true))
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.tally.used.set(self.tally.used.get() + n as u64);
    }
}

/// `source` decompressed as its first bytes say (every gzip member, zstd
/// frame or bzip2 stream), or as it is: for a reader of a format of its
/// own (a WARC file's records) rather than of lines.
pub(crate) fn decoded(source: Source) -> Result<Box<dyn Read>, Problem> {
    open(source).map(|stream| stream.reader)
}

/// Reads the first bytes of `source` to tell its format, and opens it as
/// a stream of that format.
fn open(mut source: Source) -> Result<Stream, Problem> {
    let mut prefix = Vec::with_capacity(MAGIC_BYTES);
    let sniffed = loop {
        let mut byte = [0u8; MAGIC_BYTES];
        let want = MAGIC_BYTES - prefix.len();
        let read = match source.read(&mut byte[..want]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Problem::Io(e)),
        };
        prefix.extend_from_slice(&byte[..read]);
        match sniff(&prefix, read == 0) {
            Sniffed::NeedMore if prefix.len() < MAGIC_BYTES => {}
            Sniffed::NeedMore => break Sniffed::Plain,
            sniffed => break sniffed,
        }
    };
    let tally = Rc::new(Tally::default());
    let capacity = match sniffed {
        Sniffed::Compressed(_) => COMPRESSED_BUFFER_BYTES,
        // Reads as large as the chunker's go straight through.
        _ => READ_BYTES,
    };
    let raw = Counted {
        inner: BufReader::with_capacity(capacity, io::Cursor::new(prefix).chain(source)),
        tally: Rc::clone(&tally),
    };
    let (reader, format): (Box<dyn Read>, _) = match sniffed {
        Sniffed::Compressed(format) => (decoder(format, raw).map_err(Problem::Io)?, Some(format)),
        Sniffed::Unsupported(format, command) => {
            return Err(Problem::Unsupported { format, command });
        }
        Sniffed::Plain | Sniffed::NeedMore => (Box::new(raw), None),
    };
    Ok(Stream {
        reader,
        format,
        tally,
        reported: 0,
    })
}

/// A decoder of `format` reading `raw`: every member, frame or stream to
/// the end ([`Members`]).
fn decoder<R: BufRead + 'static>(format: Format, raw: R) -> io::Result<Box<dyn Read>> {
    Ok(Box::new(Members {
        format,
        member: Some(Member::start(format, raw)?),
    }))
}

/// One member (gzip), frame (zstd) or stream (bzip2) being decoded.
enum Member<R: BufRead> {
    Gzip(Box<flate2::bufread::GzDecoder<R>>),
    Zstd(zstd::stream::read::Decoder<'static, R>),
    Bzip2(bzip2::bufread::BzDecoder<R>),
}

impl<R: BufRead> Member<R> {
    fn start(format: Format, raw: R) -> io::Result<Member<R>> {
        Ok(match format {
            Format::Gzip => Member::Gzip(Box::new(flate2::bufread::GzDecoder::new(raw))),
            Format::Zstd => {
                Member::Zstd(zstd::stream::read::Decoder::with_buffer(raw)?.single_frame())
            }
            Format::Bzip2 => Member::Bzip2(bzip2::bufread::BzDecoder::new(raw)),
        })
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Member::Gzip(d) => d.read(buf),
            Member::Zstd(d) => d.read(buf),
            Member::Bzip2(d) => d.read(buf),
        }
    }

    /// The bytes after it, once it is decoded to its end.
    fn into_rest(self) -> R {
        match self {
            Member::Gzip(d) => d.into_inner(),
            Member::Zstd(d) => d.finish(),
            Member::Bzip2(d) => d.into_inner(),
        }
    }
}

/// Every member of a compressed stream, one after another (RFC 1952 §2.2:
/// a gzip file is a series of members; RFC 8878 §3: of frames; bzip2
/// streams likewise). After a member, bytes that begin another are read as
/// one; any others are [`TrailingBytes`], not damage.
struct Members<R: BufRead> {
    format: Format,
    /// `None` once the stream has ended.
    member: Option<Member<R>>,
}

impl<R: BufRead> Read for Members<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = self.member.as_mut() else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let mut rest = self.member.take().expect("a member").into_rest();
            let next = rest.fill_buf()?;
            if next.is_empty() {
                return Ok(0);
            }
            // A partial magic number is left to the decoder to judge.
            match sniff(next, false) {
                Sniffed::Compressed(f) if f == self.format => {}
                Sniffed::NeedMore => {}
                _ => return Err(TrailingBytes::counted(&mut rest)),
            }
            self.member = Some(Member::start(self.format, rest)?);
        }
    }
}

/// Bytes after a compressed stream's last member that begin no other:
/// how many, read to the end (gzip ignores them with a warning).
#[derive(Debug)]
struct TrailingBytes(u64);

impl TrailingBytes {
    /// The error for the trailing bytes of `rest`, read to count them.
    fn counted(rest: &mut impl BufRead) -> io::Error {
        let mut bytes = 0;
        loop {
            match rest.fill_buf() {
                Ok([]) => break,
                Ok(buf) => {
                    let n = buf.len();
                    bytes += n as u64;
                    rest.consume(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return e,
            }
        }
        io::Error::new(io::ErrorKind::InvalidData, TrailingBytes(bytes))
    }

    /// The trailing bytes `error` stands for, if it is such an error.
    fn of(error: &io::Error) -> Option<&TrailingBytes> {
        error.get_ref()?.downcast_ref()
    }
}

impl std::fmt::Display for TrailingBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes after the last member", self.0)
    }
}

impl std::error::Error for TrailingBytes {}

/// Reads `stream` to its end, sending its lines as `delivery` says.
/// `Err(None)`: nobody takes the blocks any more; `Err(Some(e))`: reading
/// failed.
fn read_lines(
    stream: &mut Stream,
    delivery: Delivery,
    sender: &mpsc::SyncSender<Result<Block, InputError>>,
) -> Result<(), Option<io::Error>> {
    let send = |stream: &mut Stream, bytes: Vec<u8>| {
        let read = stream.newly_read();
        sender.send(Ok(Block { bytes, read })).map_err(|_| None)
    };
    let mut scratch = match delivery {
        Delivery::AsRead => vec![0u8; READ_BYTES],
        Delivery::Chunks(_) => Vec::new(),
    };
    let mut block: Vec<u8> = Vec::new();
    loop {
        let have = block.len();
        let read = match delivery {
            Delivery::Chunks(n) => {
                block.resize(have + n, 0);
                let (read, failed) = read_full(&mut stream.reader, &mut block[have..]);
                block.truncate(have + read);
                if let Some(e) = failed {
                    return Err(send_before(stream, block, e, send));
                }
                read
            }
            Delivery::AsRead => loop {
                match stream.reader.read(&mut scratch) {
                    Ok(n) => {
                        block.extend_from_slice(&scratch[..n]);
                        break n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(send_before(stream, block, e, send)),
                }
            },
        };
        // The end (in blocks, a short read: an input smaller than a block
        // is one block): what is left is the last line, without a newline.
        let ended = match delivery {
            Delivery::Chunks(n) => read < n,
            Delivery::AsRead => read == 0,
        };
        if ended {
            return match block.is_empty() {
                true => Ok(()),
                false => send(stream, block),
            };
        }
        // A line longer than a block: read on until its newline.
        let Some(last) = memrchr(b'\n', &block[have..]) else {
            continue;
        };
        let cut = have + last + 1;
        let mut rest = Vec::with_capacity(match delivery {
            Delivery::Chunks(n) => n + block.len() - cut,
            Delivery::AsRead => 0,
        });
        rest.extend_from_slice(&block[cut..]);
        block.truncate(cut);
        send(stream, std::mem::replace(&mut block, rest))?;
    }
}

/// Hands over what was decoded before `error`: every whole line, and,
/// when only trailing bytes followed the data, its last line too (the
/// data is complete). Returns the error to report after them, or `None`
/// when nobody takes the blocks any more.
fn send_before(
    stream: &mut Stream,
    mut block: Vec<u8>,
    error: io::Error,
    send: impl Fn(&mut Stream, Vec<u8>) -> Result<(), Option<io::Error>>,
) -> Option<io::Error> {
    if TrailingBytes::of(&error).is_none() {
        block.truncate(memrchr(b'\n', &block).map_or(0, |last| last + 1));
    }
    match block.is_empty() || send(stream, block).is_ok() {
        true => Some(error),
        false => None,
    }
}

/// Reads until `buf` is full, the stream ends, or an error; returns how
/// much was read, and the error that stopped it.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(bytes: Vec<u8>, delivery: Delivery) -> Vec<Vec<u8>> {
        let source: Source = Box::new(io::Cursor::new(bytes));
        spawn("t".into(), source, delivery)
            .iter()
            .map(|b| b.map(|b| b.bytes).map_err(|e| e.to_string()).unwrap())
            .collect()
    }

    #[test]
    fn blocks_hold_whole_lines_and_all_the_bytes() {
        let text: Vec<u8> = (0..500)
            .flat_map(|i| format!("http://a/{}\n", "x".repeat(i % 37)).into_bytes())
            .chain(*b"last")
            .collect();
        for delivery in [Delivery::Chunks(64), Delivery::Chunks(7), Delivery::AsRead] {
            let got = blocks(text.clone(), delivery);
            assert_eq!(got.concat(), text, "{delivery:?}");
            let (ends, last) = got.split_at(got.len() - 1);
            assert!(ends.iter().all(|b| b.ends_with(b"\n")), "{delivery:?}");
            assert!(last[0].ends_with(b"last"));
        }
    }
}
