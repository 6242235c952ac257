//! Streams: standard input, pipes, and compressed files, read on a thread
//! of their own that hands the chunker blocks of whole lines, so that
//! reading and decompressing overlap the work on the lines.
//!
//! A stream's format is told by its first bytes, never by a file's name:
//! gzip (every member of a multi-member file), zstd (every frame) and bzip2
//! (every stream) are decompressed; anything else is read as it is. The
//! thread counts the stream's own bytes (compressed ones, when it is
//! compressed) for the progress bar, and names the byte where damaged
//! compressed data stops decoding.
//!
//! It knows bytes, formats and newlines; nothing of what a line holds.

use std::cell::Cell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;
use std::sync::mpsc;

use memchr::memrchr;

use super::input_error::{InputError, Problem};
pub use super::sniff::Format;
use super::sniff::{MAGIC_BYTES, Sniffed, sniff};

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
/// the end, where anything but another one is damage.
fn decoder<R: BufRead + 'static>(format: Format, raw: R) -> io::Result<Box<dyn Read>> {
    Ok(match format {
        Format::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
        Format::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(raw)?),
        Format::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(raw)),
    })
}

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
                let read = read_full(&mut stream.reader, &mut block[have..]).map_err(Some)?;
                block.truncate(have + read);
                read
            }
            Delivery::AsRead => loop {
                match stream.reader.read(&mut scratch) {
                    Ok(n) => {
                        block.extend_from_slice(&scratch[..n]);
                        break n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Some(e)),
                }
            },
        };
        if read == 0 {
            // The end: what is left is the last line, without a newline.
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

/// Reads until `buf` is full or the stream ends; returns how much was read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
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
