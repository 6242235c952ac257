//! Cutting the inputs into chunks that end at a newline, in input order:
//! slices of the memory map for files, blocks read from standard input.
//!
//! It knows bytes and newlines; what a line holds is the workers' business.

use std::io::{self, Read};

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

    /// Up to `len` chunks, in order; none once the inputs are done.
    pub fn next_batch(&mut self, len: usize) -> Result<Vec<Chunk<'a>>, InputError> {
        let mut batch = Vec::with_capacity(len);
        while batch.len() < len {
            match self.next_chunk()? {
                Some(chunk) => batch.push(chunk),
                None => break,
            }
        }
        Ok(batch)
    }

    /// The next chunk, or an error reading standard input.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk<'a>>, InputError> {
        while let Some(input) = self.inputs.get(self.source) {
            let chunk = match input.bytes() {
                Some(bytes) => self.next_mapped(bytes),
                None => self.next_stdin()?,
            };
            if chunk.is_some() {
                return Ok(chunk);
            }
            self.source += 1;
            self.offset = 0;
        }
        Ok(None)
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
