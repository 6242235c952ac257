//! What a worker makes of one chunk: each line's key (written by a
//! [`LineMapper`] into the chunk's arena) and its hash, the rejected lines
//! with their reasons, and the blank lines counted.

use super::input::{BOM, strip_cr};
use super::reader::Chunk;
use super::{Invalid, LineMapper};
use crate::error::InvalidUri;

/// The hasher of keys: ahash with fixed seeds, so a run is reproducible.
pub fn key_hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    )
}

/// A byte range in a chunk or in its arena.
#[derive(Clone, Copy, Debug)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Span {
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

/// An accepted line.
#[derive(Clone, Copy, Debug)]
pub struct Accepted {
    pub hash: u64,
    /// The key in the arena, or `None` when the key is the line itself.
    pub key: Option<Span>,
    /// The line as read, without its ending.
    pub line: Span,
    /// 0-based index of the line in its chunk.
    pub index: u32,
}

/// A rejected line.
#[derive(Clone, Copy, Debug)]
pub struct Rejected {
    pub error: InvalidUri,
    pub line: Span,
    pub index: u32,
}

/// One chunk, processed.
pub struct Processed<'a> {
    pub chunk: Chunk<'a>,
    /// The keys that differ from their lines, back to back.
    pub arena: Vec<u8>,
    pub accepted: Vec<Accepted>,
    pub rejected: Vec<Rejected>,
    pub blank: u64,
    /// Invalid lines accepted as written (`Invalid::Pass`), also in `accepted`.
    pub passed: u64,
    /// Lines in the chunk, blank ones included.
    pub lines: u32,
}

impl Processed<'_> {
    /// The key of an accepted line.
    pub fn key(&self, accepted: &Accepted) -> &[u8] {
        match accepted.key {
            Some(span) => span.of(&self.arena),
            None => accepted.line.of(&self.chunk.bytes),
        }
    }

    /// The bytes of a line.
    pub fn line(&self, span: Span) -> &[u8] {
        span.of(&self.chunk.bytes)
    }
}

/// Maps every line of `chunk`, hashing keys with `hasher` when given. A chunk holds fewer than 4 GiB (it is cut at
/// about [`super::reader::CHUNK_BYTES`], plus the longest line), so `u32`
/// offsets hold.
pub fn process<'a>(
    chunk: Chunk<'a>,
    mapper: &dyn LineMapper,
    hasher: Option<&ahash::RandomState>,
    invalid: Invalid,
) -> Processed<'a> {
    let bytes: &[u8] = &chunk.bytes;
    let mut arena = Vec::with_capacity(bytes.len() / 4);
    let mut accepted = Vec::with_capacity(bytes.len() / 64);
    let mut rejected = Vec::new();
    let mut blank = 0;
    let mut passed = 0;
    let mut index = 0u32;
    // Only deduplication needs hashes; mapping writes every line anyway.
    let hash = |key: &[u8]| hasher.map_or(0, |h| h.hash_one(key));
    let mut pos = if chunk.at_start && bytes.starts_with(BOM) {
        BOM.len()
    } else {
        0
    };
    while pos < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |n| pos + n);
        let line = strip_cr(&bytes[pos..end]);
        let span = Span::new(pos, pos + line.len());
        if line.is_empty() {
            blank += 1;
        } else {
            let key_start = arena.len();
            match mapper.map_line(line, &mut arena) {
                Ok(changed) => {
                    let key = changed.then(|| Span::new(key_start, arena.len()));
                    let key_bytes = if changed { &arena[key_start..] } else { line };
                    accepted.push(Accepted {
                        hash: hash(key_bytes),
                        key,
                        line: span,
                        index,
                    });
                }
                Err(_) if invalid == Invalid::Pass => {
                    passed += 1;
                    accepted.push(Accepted {
                        hash: hash(line),
                        key: None,
                        line: span,
                        index,
                    });
                }
                Err(error) => rejected.push(Rejected {
                    error,
                    line: span,
                    index,
                }),
            }
        }
        index += 1;
        pos = end + 1;
    }
    Processed {
        chunk,
        arena,
        accepted,
        rejected,
        blank,
        passed,
        lines: index,
    }
}
