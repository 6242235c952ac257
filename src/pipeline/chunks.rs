//! Cutting the inputs into chunks that end at a newline, in input order:
//! slices of the memory map for files, blocks read from standard input.
//!
//! Line-buffered ([`Chunks::line_buffered`]), standard input is read by a
//! thread of its own that hands over whatever each read returns, and a
//! batch takes the lines that have arrived, never waiting for more: a
//! coprocess gets each answer as soon as its line is read, while bulk input
//! still comes in large batches.
//!
//! It knows bytes and newlines; what a line holds is the workers' business.

use std::io::{self, Read};
use std::sync::mpsc;

use memchr::memrchr;

use super::input::{Input, InputError, STDIN};

/// How many bytes a chunk holds, about: large enough to amortize the hand-off
/// to a worker, small enough that a batch of them stays in cache-friendly
/// arenas and the first output comes quickly.
pub const CHUNK_BYTES: usize = 1 << 20;

/// A run of whole lines from one input.
pub struct Chunk<'a> {
    /// Which input, as an index into the run's inputs.
    pub source: usize,
    /// Where the chunk starts in its input; 0 is where a BOM may stand.
    pub offset: usize,
    pub bytes: ChunkBytes<'a>,
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

/// The chunks of all inputs, in order.
pub struct Chunks<'a> {
    inputs: &'a [Input],
    source: usize,
    /// How far into the current input's map (or stream) we are.
    offset: usize,
    /// Bytes read from standard input past the last newline of the previous block.
    carry: Vec<u8>,
    stdin_done: bool,
    chunk_bytes: usize,
    /// Line-buffered: the blocks the reading thread hands over, once it runs.
    reader: Option<Reader>,
    line_buffered: bool,
}

/// How often a line-buffered read waiting for input looks for an interrupt.
const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// What the thread reading standard input hands over: a block, or the error
/// that ended it. It ends at the end of the input.
type Reader = mpsc::Receiver<io::Result<Vec<u8>>>;

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
            carry: Vec::new(),
            stdin_done: false,
            chunk_bytes,
            reader: None,
            line_buffered: false,
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
        Some(Chunk {
            source: self.source,
            offset: start,
            bytes: ChunkBytes::Borrowed(&bytes[start..end]),
        })
    }

    /// The next block of standard input, ending after a newline or at EOF.
    fn next_stdin(&mut self) -> Result<Option<Chunk<'a>>, InputError> {
        let mut block = std::mem::take(&mut self.carry);
        let mut stdin = io::stdin().lock();
        loop {
            let have = block.len();
            if self.stdin_done {
                break;
            }
            block.resize(have + self.chunk_bytes, 0);
            let read =
                read_full(&mut stdin, &mut block[have..]).map_err(|e| InputError::new(STDIN, e))?;
            block.truncate(have + read);
            if read < self.chunk_bytes {
                self.stdin_done = true;
            }
            // A line longer than a block: read on until its newline.
            if memrchr(b'\n', &block[have..]).is_some() {
                break;
            }
        }
        if block.is_empty() {
            return Ok(None);
        }
        if !self.stdin_done {
            let cut = memrchr(b'\n', &block).map_or(block.len(), |n| n + 1);
            self.carry = block.split_off(cut);
        }
        let offset = self.offset;
        self.offset += block.len();
        Ok(Some(Chunk {
            source: self.source,
            offset,
            bytes: ChunkBytes::Owned(block),
        }))
    }

    /// The next lines of standard input that have arrived, line-buffered:
    /// waits for a whole line only when `wait`.
    fn next_arrived(&mut self, wait: bool) -> Result<Next<'a>, InputError> {
        let reader = self.reader.get_or_insert_with(spawn_reader);
        let mut block = std::mem::take(&mut self.carry);
        let mut cut_short = false;
        while !self.stdin_done && memrchr(b'\n', &block).is_none() {
            let received = match wait {
                // An interrupt, deferred, ends the input here.
                true => loop {
                    if crate::cleanup::interrupted() {
                        cut_short = true;
                        break None;
                    }
                    match reader.recv_timeout(INTERRUPT_POLL) {
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        received => break received.ok(),
                    }
                },
                false => match reader.try_recv() {
                    Ok(received) => Some(received),
                    Err(mpsc::TryRecvError::Empty) => {
                        self.carry = block;
                        return Ok(Next::NotYet);
                    }
                    Err(mpsc::TryRecvError::Disconnected) => None,
                },
            };
            match received {
                Some(Ok(more)) => block.extend_from_slice(&more),
                Some(Err(e)) => return Err(InputError::new(STDIN, e)),
                None => self.stdin_done = true,
            }
        }
        // What else has arrived joins the chunk, up to a chunk's size: bulk
        // input still comes in large chunks.
        while !self.stdin_done && !cut_short && block.len() < self.chunk_bytes {
            match reader.try_recv() {
                Ok(Ok(more)) => block.extend_from_slice(&more),
                Ok(Err(e)) => return Err(InputError::new(STDIN, e)),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => self.stdin_done = true,
            }
        }
        if cut_short {
            // A line not finished when the input was cut is not a line.
            block.truncate(memrchr(b'\n', &block).map_or(0, |n| n + 1));
        }
        if block.is_empty() {
            return Ok(Next::Done);
        }
        if !self.stdin_done {
            let cut = memrchr(b'\n', &block).map_or(block.len(), |n| n + 1);
            self.carry = block.split_off(cut);
        }
        let offset = self.offset;
        self.offset += block.len();
        Ok(Next::Chunk(Chunk {
            source: self.source,
            offset,
            bytes: ChunkBytes::Owned(block),
        }))
    }

    /// Up to `len` chunks, in order; none once the inputs are done.
    /// Line-buffered, it waits only for the first: the others are the
    /// lines that have arrived already.
    pub fn next_batch(&mut self, len: usize) -> Result<Vec<Chunk<'a>>, InputError> {
        let mut batch = Vec::with_capacity(len);
        while batch.len() < len {
            let wait = batch.is_empty() || !self.line_buffered;
            match self.next_chunk(wait)? {
                Next::Chunk(chunk) => batch.push(chunk),
                Next::NotYet | Next::Done => break,
            }
        }
        Ok(batch)
    }

    /// The next chunk of any input (waiting for one when `wait`), or an
    /// error reading standard input.
    fn next_chunk(&mut self, wait: bool) -> Result<Next<'a>, InputError> {
        while let Some(input) = self.inputs.get(self.source) {
            let next = match input.bytes() {
                Some(bytes) => self.next_mapped(bytes).map_or(Next::Done, Next::Chunk),
                None if self.line_buffered => self.next_arrived(wait)?,
                None => self.next_stdin()?.map_or(Next::Done, Next::Chunk),
            };
            if !matches!(next, Next::Done) {
                return Ok(next);
            }
            self.source += 1;
            self.offset = 0;
        }
        Ok(Next::Done)
    }
}

/// Starts the thread that reads standard input as it comes: each read's
/// bytes, as soon as they are read. It stops at the end of the input, at an
/// error, or when nobody takes its blocks any more.
fn spawn_reader() -> Reader {
    let (sender, receiver) = mpsc::sync_channel(16);
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut buf = vec![0u8; CHUNK_BYTES];
        loop {
            let read = match stdin.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = read.is_err();
            if sender.send(read).is_err() || failed {
                return;
            }
        }
    });
    receiver
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
