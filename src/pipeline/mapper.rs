//! What the engine asks of a line mapper: a line turned into its key (or
//! its output, its notes, its site), or refused. It knows nothing of how
//! the engine reads, deduplicates or writes the lines.

use std::ops::Range;

use super::Rejection;
use crate::scratch::Slot;

/// What a [`LineMapper`] made of a line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mapped {
    /// The key (what lines are compared by): the line itself when `None`,
    /// else these bytes of the mapper's `out`.
    pub key: Option<Range<usize>>,
    /// What to write for the line, when it is not the key: bytes of `out`.
    pub output: Option<Range<usize>>,
    /// Things the mapper did, as bits named by [`LineMapper::note_names`]
    /// (counted in the stats).
    pub notes: u32,
    /// The line's site, which a per-site cap counts by: these bytes of
    /// `out`; `None` when it has none (then no cap applies).
    pub site: Option<Range<usize>>,
}

impl Mapped {
    /// The key is the line, unchanged.
    pub fn unchanged() -> Mapped {
        Mapped::default()
    }

    /// The key, and what is written, is `out[range]`.
    pub fn key(range: Range<usize>) -> Mapped {
        Mapped {
            key: Some(range),
            ..Mapped::default()
        }
    }
}

/// Turns one line into its key.
pub trait LineMapper: Sync {
    /// Appends what it makes of `line` to `out` and says where it is;
    /// `Ok(None)` when the line is out of the run's scope (counted as
    /// filtered, never written); or says why the line is rejected. Unless
    /// it returns a [`Mapped`], `out` is left as it was.
    /// `scratch` is the calling worker's, for the mapper's own buffers
    /// (see [`Slot`]): one per thread, reused from line to line.
    fn map_line(
        &self,
        line: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Slot,
    ) -> Result<Option<Mapped>, Rejection>;

    /// What the bits of [`Mapped::notes`] count.
    fn note_names(&self) -> &[Note] {
        &[]
    }
}

/// What a bit of [`Mapped::notes`] counts: its name, and which of the
/// stats' tallies it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Note {
    pub name: &'static str,
    pub kind: NoteKind,
}

/// The tally a [`Note`] is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// A lenient repair ([`Stats::repaired`](super::stats::Stats::repaired)).
    Repair,
    /// Something site rules did ([`Stats::rules`](super::stats::Stats::rules)).
    Rules,
}
