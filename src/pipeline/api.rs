//! What a run is given and how it ends: what to write ([`Mode`],
//! [`Emit`]), what to do with invalid lines, its options, where its
//! results go ([`Sinks`]), who watches it ([`Progress`]) and why it
//! stopped ([`RunError`]). Types only: the run itself is the parent's.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;

use super::input::InputError;
use super::output::RejectSink;
use super::stats::Stats;
use super::{Refused, SetAside, SpillError};
use crate::store::{Store, StoreError};
use crate::sys::os_error::Reason;

/// What to write for the lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every accepted line's key, in order (`normalize`, `resolve`).
    Map,
    /// Each class once, at its first occurrence (`dedup`).
    Dedup(Emit),
}

/// What `dedup` writes for a class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Emit {
    /// The key (the canonical form).
    Canonical,
    /// The first original line of the class.
    First,
    /// `N<TAB>key`, like `uniq -c`, once the whole input is read.
    Count,
    /// One line for every input line, in order, for a coprocess reading
    /// in lockstep: `new<TAB>key`, `dup<TAB>key` (seen earlier in this
    /// run), `seen<TAB>key` (held by the seen store), `capped<TAB>key`
    /// (past its site's cap), `rejected<TAB>reason`, `filtered` (out of
    /// scope) or `blank`. Every key stays in memory (nothing spills).
    Verdict,
    /// Nothing: the classes are counted (and admitted to a seen store).
    #[cfg_attr(feature = "cli", value(skip))]
    Nothing,
}

impl Emit {
    /// The mode's name, as the command line and the stats write it.
    ///
    /// ```
    /// assert_eq!(urinorm::pipeline::Emit::First.name(), "first");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Emit::Canonical => "canonical",
            Emit::First => "first",
            Emit::Count => "count",
            Emit::Verdict => "verdict",
            Emit::Nothing => "nothing",
        }
    }
}

/// What to do with a line the mapper rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Invalid {
    /// Report it and leave it out.
    Reject,
    /// Keep it as written (the string rung); count it as passed.
    Pass,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    pub invalid: Invalid,
    /// Worker threads.
    pub threads: usize,
    /// Longer lines are rejected (never truncated).
    pub max_line_bytes: usize,
    /// The first line of each input is a header: written as it is, never
    /// mapped, counted as a header.
    pub header: bool,
    /// When mapping: one output line per input line, in order; an empty one
    /// for a rejected line, and for a blank line what the mapper makes of
    /// the empty reference (counted as blank).
    pub aligned: bool,
    /// When deduplicating: the bytes the set of keys may take. Past it, new
    /// keys spill to partition files under `temp_dir` (same output).
    pub memory_limit: Option<u64>,
    pub temp_dir: PathBuf,
    /// Answer each line as soon as it is read: standard input is taken as
    /// it arrives, and the output is flushed after every batch.
    pub line_buffered: bool,
    /// Line-buffered against a seen store, to a stream: commit what was
    /// written at least this often.
    pub commit_every: std::time::Duration,
    /// When deduplicating: at most this many classes of each site (as the
    /// mapper's [`Mapped::site`] says), the first in input order; the
    /// others are counted as capped. Classes a seen store holds use none
    /// of it, so it is consulted batch by batch (nothing spills).
    pub per_site_cap: Option<u64>,
    /// Against a seen store: at most so many keys of each site (as the
    /// mapper's [`Mapped::site`] says) in the store, across runs; a new
    /// class past it is capped. The store records each key's site, and
    /// what its sites are ([`Budget::site`]: the mapper's must be it).
    pub per_site_budget: Option<super::Budget>,
    /// When deduplicating: write the classes at the end, in byte order of
    /// their keys (what `LC_ALL=C sort -u` gives), not as they come. Past
    /// the memory limit each spilled partition is sorted and all are merged.
    /// Not with verdicts, which answer line by line. Against a seen store,
    /// or under a cap, every key stays in memory (nothing spills).
    pub sort: bool,
    /// Read an input that looks binary as lines ([`chunks::Chunk::binary`]); by
    /// default its lines are counted as binary and none is read.
    pub binary_as_text: bool,
}

/// The default `max_line_bytes`: far above any URL a browser sends, far
/// below what could exhaust memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

impl Default for Options {
    /// Mapping every line on one thread, rejecting invalid lines, with no
    /// memory limit.
    fn default() -> Options {
        Options {
            mode: Mode::Map,
            invalid: Invalid::Reject,
            threads: 1,
            max_line_bytes: MAX_LINE_BYTES,
            header: false,
            aligned: false,
            memory_limit: None,
            temp_dir: std::env::temp_dir(),
            line_buffered: false,
            commit_every: std::time::Duration::from_secs(1),
            per_site_cap: None,
            per_site_budget: None,
            sort: false,
            binary_as_text: false,
        }
    }
}

/// Where a run's results go, and whom it tells how far it got.
pub struct Sinks<'s> {
    /// The output lines.
    pub out: &'s mut dyn Write,
    /// When `out` writes to a regular file from its start, another handle
    /// on that file: a run against a seen store then writes its output
    /// there at once and removes the lines of held classes in place, rather
    /// than spooling the output elsewhere until the store is consulted.
    pub out_file: Option<File>,
    /// Each rejected line.
    pub rejects: &'s mut dyn RejectSink,
    /// Deduplicating: the capped and duplicate lines, where asked.
    pub set_aside: SetAside<'s>,
    pub progress: &'s dyn Progress,
    /// When deduplicating, a seen store: the classes it holds are not
    /// written (their lines are counted as seen). Opened for writing, it
    /// gets the classes it does not hold staged as its next run, which the
    /// caller publishes once the output is safe (so a kill in between can
    /// only write a class again, never lose one). Unused when mapping.
    pub seen: Option<&'s mut Store>,
    /// With a seen store opened for writing, in bulk: stage tombstones for
    /// the classes it holds (forget them) rather than admit those it does
    /// not (`seen forget`).
    pub forget: bool,
}

/// Told how far a run got; the library itself shows nothing.
pub trait Progress: Sync {
    /// `bytes` more of the input are done.
    fn advance(&self, bytes: u64);
}

/// Progress that nobody watches.
pub struct Unwatched;

impl Progress for Unwatched {
    fn advance(&self, _bytes: u64) {}
}

/// Why a run stopped.
#[derive(Debug)]
pub enum RunError {
    Input(InputError),
    /// Writing the output failed.
    Output(io::Error),
    /// Writing the capped or duplicate lines set aside failed.
    SetAside(io::Error),
    /// Writing the rejects report failed.
    Rejects(io::Error),
    /// Writing or reading the spill files failed (a full disk, say).
    Spill(SpillError),
    /// The seen store could not be read or its next run written.
    Seen(StoreError),
    /// The worker threads could not be started.
    ThreadPool(rayon::ThreadPoolBuildError),
    /// A bug stopped a thread of the engine: no output can be trusted.
    WorkerPanicked,
    /// The options ask for what the engine cannot do together.
    Refused(Refused),
    /// A bug: the counts do not account for every line read.
    Unbalanced(Box<Stats>),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Input(e) => e.fmt(f),
            RunError::Output(e) => write!(f, "cannot write the output: {}", Reason(e)),
            RunError::SetAside(e) => write!(
                f,
                "cannot write the lines set aside (--capped, --dupes): {}",
                Reason(e)
            ),
            RunError::Rejects(e) => write!(
                f,
                "cannot write the report of rejected lines: {}",
                Reason(e)
            ),
            RunError::Spill(e) => e.fmt(f),
            RunError::Seen(e) => e.fmt(f),
            RunError::ThreadPool(e) => write!(f, "cannot start the worker threads: {e}"),
            RunError::WorkerPanicked => f.write_str(
                "internal error: an engine thread stopped on a bug (please report it); the output is incomplete",
            ),
            RunError::Refused(e) => e.fmt(f),
            RunError::Unbalanced(stats) => write!(
                f,
                "internal error: the counts do not add up to the {} lines read (a bug: please report it): {stats:?}",
                stats.lines
            ),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Input(e) => Some(e),
            RunError::Output(e) | RunError::Rejects(e) | RunError::SetAside(e) => Some(e),
            RunError::Spill(e) => Some(e),
            RunError::Seen(e) => Some(e),
            RunError::ThreadPool(e) => Some(e),
            RunError::Refused(e) => Some(e),
            RunError::WorkerPanicked | RunError::Unbalanced(_) => None,
        }
    }
}
