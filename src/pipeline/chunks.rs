//! Cutting the inputs into chunks that end at a newline, in input order:
//! slices of the memory map for plain files, blocks of whole lines from
//! the thread reading a stream ([`super::stream`]) otherwise.
//!
//! Line-buffered ([`Chunks::line_buffered`]), a stream's thread hands over
//! the lines of each read as soon as it returns, and a batch takes the
//! lines that have arrived, never waiting for more: a coprocess gets each
//! answer as soon as its line is read, while bulk input still comes in
//! large batches.
//!
//! It also owns the one line loop ([`Chunk::lines`]): where a line ends,
//! the BOM, the CR, the header and the length limit are decided here for
//! every reader of chunks (the engine's workers and the ladder alike).
//!
//! It knows bytes and newlines; what a line holds is the workers' business.

use std::sync::mpsc;

use memchr::Memchr;

use super::input::{BOM, Input, InputError, strip_cr};
use super::stream::{Block, Blocks, Delivery};

/// How many bytes a chunk holds, about: large enough to amortize the hand-off
/// to a worker, small enough that a batch of them stays in cache-friendly
/// arenas and the first output comes quickly.
pub const CHUNK_BYTES: usize = 1 << 20;

/// A run of whole lines from one input.
pub struct Chunk<'a> {
    /// Which input, as an index into the run's inputs.
    pub source: usize,
    /// Where the chunk starts in its input's lines; 0 is where a BOM may stand.
    pub offset: usize,
    pub bytes: ChunkBytes<'a>,
    /// How many of the input's own bytes it stands for, as the progress
    /// bar counts them (a compressed file's compressed bytes).
    pub input_bytes: u64,
    /// Its input looks binary ([`looks_binary`]): every line is
    /// [`Line::Binary`], read by no one.
    pub binary: bool,
}

/// How much of an input is searched for a NUL byte.
pub const BINARY_PROBE: usize = 64 << 10;

/// Whether an input whose first chunk is `first` is a binary file rather
/// than a list of lines: as grep judges, by NUL bytes (no URI holds one),
/// but on at least a quarter of the lines of its first [`BINARY_PROBE`]
/// bytes, so that a list with a stray NUL is still read (that line is
/// rejected). An executable has NULs on nine lines in ten, compressed
/// data (a format urinorm does not decode) on a third to a half.
pub fn looks_binary(first: &[u8]) -> bool {
    let probe = &first[..first.len().min(BINARY_PROBE)];
    if memchr::memchr(0, probe).is_none() {
        return false;
    }
    let (mut lines, mut with_nul) = (0usize, 0usize);
    for line in probe.split(|&b| b == b'\n') {
        lines += 1;
        with_nul += usize::from(memchr::memchr(0, line).is_some());
    }
    with_nul * 4 >= lines.max(4)
}

/// A byte range in a chunk or in its arena.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub(crate) fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            len: (end - start) as u32,
        }
    }

    /// The bytes of `of` this span covers.
    pub fn of<'b>(&self, of: &'b [u8]) -> &'b [u8] {
        &of[self.start as usize..(self.start + self.len) as usize]
    }
}

/// The rules every line obeys, whoever reads it.
#[derive(Clone, Copy, Debug)]
pub struct LineRules {
    /// An input's first line is a header, passed through and not read.
    pub header: bool,
    /// A longer line is rejected unread.
    pub max_line_bytes: usize,
}

/// What a line of a chunk is, before anyone reads its URI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// The input's first line, under [`LineRules::header`].
    Header,
    Blank,
    /// Longer than [`LineRules::max_line_bytes`].
    TooLong,
    /// A line to read, without its ending.
    Text(&'a [u8]),
    /// A line of an input that looks binary: counted, never read.
    Binary,
}

/// The lines of a chunk, each with its index in the chunk and its span
/// (see [`Chunk::lines`]).
pub struct ChunkLines<'c> {
    bytes: &'c [u8],
    pos: usize,
    /// One iterator over the newlines of the chunk, not a search per line.
    newlines: Memchr<'c>,
    index: u32,
    header: bool,
    max_line_bytes: usize,
    binary: bool,
}

impl<'c> Iterator for ChunkLines<'c> {
    type Item = (u32, Span, Line<'c>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let end = self.newlines.next().unwrap_or(self.bytes.len());
        let text = strip_cr(&self.bytes[self.pos..end]);
        let span = Span::new(self.pos, self.pos + text.len());
        let line = if self.binary {
            Line::Binary
        } else if self.index == 0 && self.header {
            Line::Header
        } else if text.is_empty() {
            Line::Blank
        } else if text.len() > self.max_line_bytes {
            Line::TooLong
        } else {
            Line::Text(text)
        };
        let index = self.index;
        self.index += 1;
        self.pos = end + 1;
        Some((index, span, line))
    }
}

/// A chunk's bytes: borrowed from a map, or read from a stream.
pub enum ChunkBytes<'a> {
    Borrowed(&'a [u8]),
    Owned(Vec<u8>),
}

impl std::ops::Deref for ChunkBytes<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ChunkBytes::Borrowed(bytes) => bytes,
            ChunkBytes::Owned(bytes) => bytes,
        }
    }
}

impl Chunk<'_> {
    /// The chunk's lines, as every reader of chunks sees them: split at
    /// `\n` with a `\r` before it dropped, after the BOM of an input's
    /// first chunk, the input's first line its header when `rules` say so.
    /// A chunk holds fewer than 4 GiB (it is cut at about [`CHUNK_BYTES`],
    /// plus the longest line), so `u32` offsets hold.
    pub fn lines(&self, rules: LineRules) -> ChunkLines<'_> {
        let bytes: &[u8] = &self.bytes;
        let first = self.offset == 0;
        ChunkLines {
            bytes,
            pos: if first && bytes.starts_with(BOM) {
                BOM.len()
            } else {
                0
            },
            newlines: memchr::memchr_iter(b'\n', bytes),
            index: 0,
            header: first && rules.header,
            max_line_bytes: rules.max_line_bytes,
            binary: self.binary,
        }
    }
}

/// The chunks of all inputs, in order.
pub struct Chunks<'a> {
    inputs: &'a [Input],
    source: usize,
    /// How far into the current input's map (or lines) we are.
    offset: usize,
    chunk_bytes: usize,
    /// The blocks of the current input, when it is a stream being read.
    stream: Option<Blocks>,
    line_buffered: bool,
    /// Read every input as lines, even one that looks binary.
    binary_as_text: bool,
    /// The current input looks binary.
    binary: bool,
    /// An error reading a stream that came after chunks of the same
    /// batch: reported by the next batch, once they are handed over.
    failed: Option<InputError>,
}

/// How often a line-buffered read waiting for input looks for an interrupt.
const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether the next chunk is there, or when line-buffered, not yet.
enum Next<'a> {
    Chunk(Chunk<'a>),
    /// Line-buffered: no whole line has arrived yet.
    NotYet,
    /// This input is done.
    Done,
}

impl<'a> Chunks<'a> {
    pub fn new(inputs: &'a [Input]) -> Chunks<'a> {
        Chunks::with_chunk_bytes(inputs, CHUNK_BYTES)
    }

    /// Chunks of about `chunk_bytes` (tests use small ones to cross boundaries).
    pub fn with_chunk_bytes(inputs: &'a [Input], chunk_bytes: usize) -> Chunks<'a> {
        Chunks {
            inputs,
            source: 0,
            offset: 0,
            chunk_bytes,
            stream: None,
            line_buffered: false,
            binary_as_text: false,
            binary: false,
            failed: None,
        }
    }

    /// Chunks that read an input that looks binary as lines too (grep's
    /// `--text`), rather than marking it [`Chunk::binary`].
    pub fn binary_as_text(self, yes: bool) -> Chunks<'a> {
        Chunks {
            binary_as_text: yes,
            ..self
        }
    }

    /// Chunks that come as their lines arrive (see the module's comment).
    pub fn line_buffered(inputs: &'a [Input]) -> Chunks<'a> {
        Chunks {
            line_buffered: true,
            ..Chunks::new(inputs)
        }
    }

    /// The next chunk of a mapped input, ending after a newline or at the end.
    fn next_mapped(&mut self, bytes: &'a [u8]) -> Option<Chunk<'a>> {
        let start = self.offset;
        if start >= bytes.len() {
            return None;
        }
        let want = (start + self.chunk_bytes).min(bytes.len());
        let end = match memchr::memchr(b'\n', &bytes[want - 1..]) {
            Some(n) => want + n,
            None => bytes.len(),
        };
        self.offset = end;
        Some(self.judged(Chunk {
            source: self.source,
            offset: start,
            bytes: ChunkBytes::Borrowed(&bytes[start..end]),
            input_bytes: (end - start) as u64,
            binary: false,
        }))
    }

    /// `chunk`, marked binary when its input is: judged from the input's
    /// first chunk, and kept for the rest of it.
    fn judged(&mut self, chunk: Chunk<'a>) -> Chunk<'a> {
        if chunk.offset == 0 {
            self.binary = !self.binary_as_text && looks_binary(&chunk.bytes);
        }
        Chunk {
            binary: self.binary,
            ..chunk
        }
    }

    /// The next lines of the current input, a stream: a chunk's worth
    /// when bulk; line-buffered, the lines that have arrived, waiting for
    /// some only when `wait`.
    fn next_streamed(&mut self, blocks: Blocks, wait: bool) -> Result<Next<'a>, InputError> {
        let first = match wait {
            true => receive(&blocks),
            false => match blocks.try_recv() {
                Ok(block) => Some(block),
                Err(mpsc::TryRecvError::Empty) => {
                    self.stream = Some(blocks);
                    return Ok(Next::NotYet);
                }
                Err(mpsc::TryRecvError::Disconnected) => None,
            },
        };
        let Some(first) = first else {
            return Ok(Next::Done);
        };
        let Block {
            mut bytes,
            read: mut input_bytes,
        } = first?;
        // What else has arrived joins the chunk, up to a chunk's size: bulk
        // input through a line-buffered run still comes in large chunks.
        while self.line_buffered && bytes.len() < self.chunk_bytes {
            let Ok(more) = blocks.try_recv() else { break };
            let more = more?;
            bytes.extend_from_slice(&more.bytes);
            input_bytes += more.read;
        }
        self.stream = Some(blocks);
        let offset = self.offset;
        self.offset += bytes.len();
        Ok(Next::Chunk(self.judged(Chunk {
            source: self.source,
            offset,
            bytes: ChunkBytes::Owned(bytes),
            input_bytes,
            binary: false,
        })))
    }

    /// Up to `len` chunks, in order; none once the inputs are done.
    /// Line-buffered, it waits only for the first: the others are the
    /// lines that have arrived already.
    /// The lines read before an error are handed over before it.
    pub fn next_batch(&mut self, len: usize) -> Result<Vec<Chunk<'a>>, InputError> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut batch = Vec::with_capacity(len);
        // A deferred interrupt ends every input here, mapped files too,
        // not only a stream waiting for lines (see `receive`).
        while batch.len() < len && !crate::sys::cleanup::interrupted() {
            let wait = batch.is_empty() || !self.line_buffered;
            match self.next_chunk(wait) {
                Ok(Next::Chunk(chunk)) => batch.push(chunk),
                Ok(Next::NotYet | Next::Done) => break,
                Err(e) if batch.is_empty() => return Err(e),
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
        }
        Ok(batch)
    }

    /// The next chunk of any input (waiting for one when `wait`), or an
    /// error reading a stream.
    fn next_chunk(&mut self, wait: bool) -> Result<Next<'a>, InputError> {
        while let Some(input) = self.inputs.get(self.source) {
            let next = match input.bytes() {
                Some(bytes) => self.next_mapped(bytes).map_or(Next::Done, Next::Chunk),
                None => {
                    let blocks = match self.stream.take() {
                        Some(blocks) => blocks,
                        None => {
                            let delivery = match self.line_buffered {
                                true => Delivery::AsRead,
                                false => Delivery::Chunks(self.chunk_bytes),
                            };
                            input.stream(delivery).expect("a streamed input")?
                        }
                    };
                    self.next_streamed(blocks, wait)?
                }
            };
            if !matches!(next, Next::Done) {
                return Ok(next);
            }
            self.stream = None;
            self.source += 1;
            self.offset = 0;
        }
        Ok(Next::Done)
    }
}

/// The next block of a stream, waiting for it; `None` at the stream's end,
/// or when an interrupt (deferred) ends the input: a line not yet whole is
/// never handed over, so none is cut.
fn receive(blocks: &Blocks) -> Option<Result<Block, InputError>> {
    loop {
        if crate::sys::cleanup::interrupted() {
            return None;
        }
        match blocks.recv_timeout(INTERRUPT_POLL) {
            Ok(block) => return Some(block),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::looks_binary;

    #[test]
    fn binary_is_nul_bytes_on_a_quarter_of_the_lines() {
        assert!(looks_binary(b"\x7fELF\x02\x01\x01\x00"));
        assert!(looks_binary(b"\x00\x01\nend\n\x00\nfi\n"));
        assert!(!looks_binary(b"http://a/\nhttp://b/\n"));
        // A stray NUL in a list: that line is rejected, the rest read.
        assert!(!looks_binary(
            b"http://a/\nhttp://b/\0\nhttp://c/\nhttp://d/\nhttp://e/\n"
        ));
        // Only the probe is judged.
        let mut late = vec![b'a'; super::BINARY_PROBE];
        late.extend_from_slice(b"\0\0\0");
        assert!(!looks_binary(&late));
    }
}
