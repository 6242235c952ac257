//! What a worker makes of one chunk: each line's key (written by a
//! [`LineMapper`] into the chunk's arena) and its hash, the rejected lines
//! with their reasons, and the blank lines counted.
//!
//! It knows lines and the mapper's verdicts; what is done with the keys
//! (written, deduplicated) is decided downstream.

use super::caps::{ChunkSites, NO_SITE, SiteNumbers};
pub use super::chunks::Span;
use super::chunks::{Chunk, Line, LineRules};
use super::{Emit, Fault, Invalid, LineMapper, Mode, Options, Rejection};
use crate::fingerprint::fingerprint;
use crate::scratch::Slot;

/// An accepted line.
#[derive(Clone, Copy, Debug)]
pub struct Accepted {
    pub hash: u64,
    /// The key in the arena, or `None` when the key is the line itself.
    pub key: Option<Span>,
    /// What to write, in the arena, when it is not the key.
    pub output: Option<Span>,
    /// The line as read, without its ending.
    pub line: Span,
    /// A blank line, mapped only for aligned output (and counted as blank).
    pub blank: bool,
    /// The number of the line's site when caps count by site, else
    /// [`NO_SITE`].
    pub site: u32,
}

/// Why a line is written as neither accepted nor rejected, where every
/// line gets one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skipped {
    Blank,
    Filtered,
    /// A line of an input that looks binary, never read.
    Binary,
}

/// A line that was not accepted, as output with a line for every line
/// writes it.
#[derive(Clone, Copy, Debug)]
pub enum NotKept<'p> {
    Rejected(&'p Rejection),
    Skipped(Skipped),
}

/// A rejected line.
#[derive(Clone, Debug)]
pub struct Rejected {
    pub error: Rejection,
    pub line: Span,
    pub index: u32,
}

/// One chunk, processed.
pub struct Processed<'a> {
    pub chunk: Chunk<'a>,
    /// The keys that differ from their lines, back to back.
    pub arena: Vec<u8>,
    pub accepted: Vec<Accepted>,
    /// When asked for, each accepted line's key's stable
    /// [`fingerprint`](crate::fingerprint), as a number; else empty.
    pub prints: Vec<u128>,
    /// For output with a line for every line (verdicts, aligned): where
    /// each line written as neither accepted nor rejected starts, and why;
    /// else empty.
    pub silent: Vec<(u32, Skipped)>,
    pub rejected: Vec<Rejected>,
    pub blank: u64,
    /// Lines of an input that looks binary ([`Chunk::binary`]), never read.
    pub binary: u64,
    /// Lines out of the mapper's scope.
    pub filtered: u64,
    /// Invalid lines accepted as written (`Invalid::Pass`), also in `accepted`.
    pub passed: u64,
    /// Lines in the chunk, blank ones included.
    pub lines: u32,
    /// How many lines had each of the mapper's note bits.
    pub notes: [u64; 32],
    /// The input's first line, passed through as a header (`Options::header`).
    pub header: Option<Span>,
    /// The worker's scratch, handed on with the buffers.
    scratch: Scratch,
}

/// What a worker reuses from line to line that is not output: the line
/// mapper's own buffers and the chunk's sites waiting for numbers. It travels with
/// the chunk's [`Buffers`], so each set of buffers has one and no two
/// threads share it.
#[derive(Default)]
struct Scratch {
    mapper: Slot,
    sites: ChunkSites,
}

impl Processed<'_> {
    /// The key of an accepted line.
    pub fn key(&self, accepted: &Accepted) -> &[u8] {
        match accepted.key {
            Some(span) => span.of(&self.arena),
            None => accepted.line.of(&self.chunk.bytes),
        }
    }

    /// What to write for an accepted line: its output, or else its key.
    pub fn output(&self, accepted: &Accepted) -> &[u8] {
        match accepted.output {
            Some(span) => span.of(&self.arena),
            None => self.key(accepted),
        }
    }

    /// The lines that were not accepted (rejected, and those in
    /// [`Processed::silent`]), in input order, each with where it starts.
    pub fn others(&self) -> impl Iterator<Item = (u32, NotKept<'_>)> {
        let mut rejected = self.rejected.iter().peekable();
        let mut silent = self.silent.iter().peekable();
        // Both lists are in input order: a merge keeps it.
        std::iter::from_fn(move || {
            let silent_first = match (rejected.peek(), silent.peek()) {
                (Some(r), Some(&&(start, _))) => start < r.line.start,
                (Some(_), None) => false,
                (None, _) => true,
            };
            match silent_first {
                true => silent
                    .next()
                    .map(|&(start, why)| (start, NotKept::Skipped(why))),
                false => rejected
                    .next()
                    .map(|r| (r.line.start, NotKept::Rejected(&r.error))),
            }
        })
    }

    /// The bytes of a line.
    pub fn line(&self, span: Span) -> &[u8] {
        span.of(&self.chunk.bytes)
    }
}

/// The vectors a worker fills for one chunk, handed back after the chunk is
/// written so the next chunk reuses them: fresh memory costs page faults and
/// zeroing on every batch, reused memory does not.
#[derive(Default)]
pub struct Buffers {
    arena: Vec<u8>,
    accepted: Vec<Accepted>,
    prints: Vec<u128>,
    silent: Vec<(u32, Skipped)>,
    rejected: Vec<Rejected>,
    scratch: Scratch,
}

impl From<Processed<'_>> for Buffers {
    fn from(p: Processed<'_>) -> Buffers {
        let mut buffers = Buffers {
            arena: p.arena,
            accepted: p.accepted,
            prints: p.prints,
            silent: p.silent,
            rejected: p.rejected,
            scratch: p.scratch,
        };
        buffers.arena.clear();
        buffers.accepted.clear();
        buffers.prints.clear();
        buffers.silent.clear();
        buffers.rejected.clear();
        buffers
    }
}

/// Which hashes of each accepted line's key a worker makes.
#[derive(Clone, Copy, Default)]
pub struct Hashes<'h> {
    /// The in-memory hash the dedup set goes by.
    pub set: Option<&'h ahash::RandomState>,
    /// The stable fingerprint a seen store keeps: made here, while the
    /// key is in the cache, rather than when the store is consulted.
    pub fingerprints: bool,
    /// The numbers of the lines' sites, for per-site caps.
    pub sites: Option<&'h SiteNumbers>,
}

/// Maps every line of `chunk` ([`Chunk::lines`]), hashing keys as
/// `hashes` asks.
pub fn process<'a>(
    chunk: Chunk<'a>,
    buffers: Buffers,
    mapper: &dyn LineMapper,
    hashes: Hashes<'_>,
    options: &Options,
) -> Processed<'a> {
    let invalid = options.invalid;
    let Buffers {
        mut arena,
        mut accepted,
        mut prints,
        mut silent,
        mut rejected,
        mut scratch,
    } = buffers;
    let verdicts = options.mode == Mode::Dedup(Emit::Verdict);
    // Aligned output writes a line for every line: a blank one is mapped
    // too (the empty reference), though it still counts as blank.
    let map_blank = options.aligned && options.mode == Mode::Map;
    let note_silent = verdicts || map_blank;
    let (hasher, sites) = (hashes.set, hashes.sites);
    let mut blank = 0;
    let mut binary = 0;
    let mut filtered = 0;
    let mut passed = 0;
    let mut notes = [0u64; 32];
    let mut lines = 0u32;
    // Only deduplication needs hashes; mapping writes every line anyway.
    let hash = |key: &[u8]| hasher.map_or(0, |h| h.hash_one(key));
    let mut header = None;
    let Scratch {
        mapper: mapper_scratch,
        sites: chunk_sites,
    } = &mut scratch;
    // A line the loop rejects unread comes as its error.
    let mut map = |line: Result<&[u8], Rejection>, span, blank_line, index, silent: &mut Vec<_>| {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                return rejected.push(Rejected {
                    error,
                    line: span,
                    index,
                });
            }
        };
        // A bug in the mapper must not lose the line or the run: a panic
        // becomes this line's rejection, with its file and line number.
        let arena_len = arena.len();
        let mapped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            mapper.map_line(line, &mut arena, mapper_scratch)
        }))
        .unwrap_or_else(|_| {
            arena.truncate(arena_len);
            Err(Rejection::new(Fault::Internal))
        });
        match mapped {
            Ok(None) => {
                filtered += 1;
                if note_silent {
                    silent.push((span.start, Skipped::Filtered));
                }
            }
            Ok(Some(mapped)) => {
                let in_arena = |r: std::ops::Range<usize>| Span::new(r.start, r.end);
                let key_bytes = match &mapped.key {
                    Some(r) => &arena[r.clone()],
                    None => line,
                };
                let hash = hash(key_bytes);
                // Most lines have no notes: their bits are not walked.
                let mut bits = mapped.notes;
                while bits != 0 {
                    notes[bits.trailing_zeros() as usize] += 1;
                    bits &= bits - 1;
                }
                // Numbered with the chunk's other sites, after the loop.
                if let (Some(numbers), Some(site)) = (sites, mapped.site) {
                    chunk_sites.push(numbers, accepted.len() as u32, &arena[site]);
                }
                accepted.push(Accepted {
                    hash,
                    key: mapped.key.map(in_arena),
                    output: mapped.output.map(in_arena),
                    line: span,
                    blank: blank_line,
                    site: NO_SITE,
                });
            }
            Err(_) if invalid == Invalid::Pass => {
                passed += u64::from(!blank_line);
                accepted.push(Accepted {
                    hash: hash(line),
                    key: None,
                    output: None,
                    line: span,
                    blank: blank_line,
                    site: NO_SITE,
                });
            }
            // A blank line is blank, whatever the mapper made of it.
            Err(_) if blank_line => {}
            Err(error) => rejected.push(Rejected {
                error,
                line: span,
                index,
            }),
        }
    };
    let rules = LineRules {
        header: options.header,
        max_line_bytes: options.max_line_bytes,
    };
    for (index, span, line) in chunk.lines(rules) {
        match line {
            // Passed through, not mapped.
            Line::Header => header = Some(span),
            Line::Blank => {
                blank += 1;
                if verdicts {
                    silent.push((span.start, Skipped::Blank));
                }
                if map_blank {
                    map(Ok(b""), span, true, index, &mut silent);
                }
            }
            Line::TooLong => {
                let too_long = Rejection::new(Fault::LineTooLong {
                    limit: options.max_line_bytes,
                });
                map(Err(too_long), span, false, index, &mut silent);
            }
            Line::Text(line) => map(Ok(line), span, false, index, &mut silent),
            Line::Binary => {
                binary += 1;
                if note_silent {
                    silent.push((span.start, Skipped::Binary));
                }
            }
        }
        lines = index + 1;
    }
    if let Some(numbers) = sites {
        numbers.number(chunk_sites, |at, n| accepted[at as usize].site = n);
    }
    let mut p = Processed {
        chunk,
        arena,
        accepted,
        prints: Vec::new(),
        silent,
        rejected,
        blank,
        binary,
        filtered,
        passed,
        lines,
        notes,
        header,
        scratch,
    };
    if hashes.fingerprints {
        prints.extend(
            p.accepted
                .iter()
                .map(|a| u128::from_be_bytes(fingerprint(p.key(a)))),
        );
        p.prints = prints;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Mapped;
    use crate::pipeline::chunks::ChunkBytes;

    /// A mapper with a bug: it panics on one line.
    struct Buggy;

    impl LineMapper for Buggy {
        fn map_line(
            &self,
            line: &[u8],
            out: &mut Vec<u8>,
            _: &mut Slot,
        ) -> Result<Option<Mapped>, Rejection> {
            out.extend_from_slice(b"partial");
            assert!(line != b"boom", "a bug");
            out.truncate(out.len() - 7);
            Ok(Some(Mapped::unchanged()))
        }
    }

    #[test]
    fn a_panicking_mapper_rejects_its_line_and_loses_nothing() {
        let chunk = Chunk {
            source: 0,
            offset: 0,
            bytes: ChunkBytes::Borrowed(b"a\nboom\nb\n"),
            input_bytes: 9,
            binary: false,
        };
        let options = Options {
            max_line_bytes: 100,
            ..Options::default()
        };
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let p = process(
            chunk,
            Buffers::default(),
            &Buggy,
            Hashes::default(),
            &options,
        );
        std::panic::set_hook(hook);
        assert_eq!(p.accepted.len(), 2);
        assert_eq!(p.rejected.len(), 1);
        assert_eq!(
            (p.rejected[0].index, p.rejected[0].error.fault()),
            (1, &Fault::Internal)
        );
        assert!(p.arena.is_empty(), "the partial write was undone");
    }
}
