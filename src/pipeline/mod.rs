//! The bulk engine: inputs cut into chunks at newlines, chunks mapped by
//! rayon workers into per-chunk arenas of keys and hashes, keys deduplicated
//! in input order, results written through one large buffer.
//!
//! It knows nothing of RFC rules: what a line's key is, or why it is
//! rejected, is the [`LineMapper`]'s business.
//!
//! One line's way, each step in its own module, this one only wiring them:
//!
//! ```text
//! input ─▶ chunks ─▶ worker (map + hash, on the pool) ─▶ dedup (─▶ spill) ─▶ writer
//! ```
//! [`input`] opens files (memory-mapped when the caller allows it) and
//! standard input; `chunks` cuts them at newlines; the `worker` maps each
//! chunk's lines into keys on the pool; the `dedup` stage decides which line
//! is the first of its class, shards in parallel, and past the memory limit
//! hands new keys to the [`spill`] (partition files by hash, deduplicated
//! at the end and merged back in input order: the same bytes); the `writer`
//! numbers, reports, writes and counts, in input order. The producer thread
//! runs one batch ahead of the writer, so writing overlaps the parallel work.
//!
//! What a run's options mean together is decided once, before any line is
//! read, by the `plan` (refusals, how a seen store is consulted, what
//! spills, spools or commits as it goes); the steps read it. However a run
//! ends (its input's end, an error in any thread, a closed output, an
//! interrupt), every thread sees it: the writer's side drops the channel
//! and raises a halt the producer looks at between batches.

mod caps;
pub(crate) mod chunks;
pub mod compress;
mod dedup;
pub(crate) mod hash;
pub mod input;
mod input_error;
pub mod output;
pub(crate) mod place;
mod plan;
mod set;
mod sniff;
mod sort;
pub(crate) mod spill;
pub mod stats;
mod store_join;
mod stream;
mod worker;
mod writer;

use std::fs::File;
use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;

use crate::error::InvalidUri;
use crate::scratch::Slot;
use crate::store::{Store, StoreError};
use crate::sys::os_error::Reason;
use caps::SiteNumbers;
use chunks::Chunks;
pub use chunks::looks_binary;
use dedup::{Decided, Dedup, FinishError, Finished, Owed};
use hash::key_hasher;
use input::{Input, InputError, total_bytes};
use output::RejectSink;
pub use plan::Refused;
// What the seen service (`crate::service`) answers a body with.
pub(crate) use dedup::{Fate, Fates};
use plan::{OutputKind, Plan, StoreAccess};
pub use sniff::Format;
pub use spill::SpillError;
use stats::Stats;
pub use store_join::SpoolError;
use store_join::{Bulk, Live, SeenMode, Spool};
pub(crate) use worker::{Buffers, Hashes, Processed, process};
pub use writer::SetAside;
use writer::Writer;
pub(crate) use writer::{Verdict, verdicts};

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
    ) -> Result<Option<Mapped>, InvalidUri>;

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
    /// A lenient repair ([`Stats::repaired`]).
    Repair,
    /// Something site rules did ([`Stats::rules`]).
    Rules,
}

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

/// Why a run with `options`, against `store`, writing to a regular file
/// when `to_file`, cannot hold its keys to [`Options::memory_limit`] (all
/// stay in memory to its end), or `None` when it can: for the caller to
/// say before the run, never to leave silent. A combination the engine
/// refuses is `None` too (the run itself says why).
pub fn memory_unbounded(
    options: &Options,
    store: Option<&Store>,
    to_file: bool,
) -> Option<&'static str> {
    plan_for(options, store, to_file).ok()?.unbounded()
}

/// The plan of a run with `options`, against `store`, writing to a regular
/// file when `to_file`.
fn plan_for(options: &Options, store: Option<&Store>, to_file: bool) -> Result<Plan, Refused> {
    let access = match store {
        None => StoreAccess::None,
        Some(store) if store.is_writable() => StoreAccess::Writable,
        Some(_) => StoreAccess::ReadOnly,
    };
    let output = match to_file {
        true => OutputKind::File,
        false => OutputKind::Stream,
    };
    Plan::new(options, access, output)
}

/// A pool of `threads` worker threads, for [`run_on`] and the ladder.
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool, RunError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(RunError::ThreadPool)
}

/// How many chunks each worker gets per batch (the ladder's too): enough
/// lines that each dedup shard gets a run of them.
pub(crate) const CHUNKS_PER_THREAD: usize = 8;

/// A batch of processed chunks, in input order, with their fates.
type Batch<'a> = Vec<Decided<'a>>;

/// Runs the engine over `inputs` into `sinks`. Output is the same bytes for
/// any number of threads.
pub fn run(
    inputs: &[Input],
    mapper: &dyn LineMapper,
    options: &Options,
    sinks: Sinks<'_>,
) -> Result<Stats, RunError> {
    run_on(
        &thread_pool(options.threads)?,
        inputs,
        mapper,
        options,
        sinks,
    )
}

/// [`run`] on a thread pool the caller keeps (`options.threads` then only
/// sizes the batches), for callers that run the engine many times.
///
/// A run is planned once ([`Plan`]), then started (its sinks and its use
/// of the store set up), drained (two threads of control: the producer
/// reads a batch of chunks, maps them on the pool, decides their fates on
/// the pool, shards in parallel, and hands the batch over; the caller's
/// thread writes it while the next batch is being made) and finished (what
/// only the end knows, the counts settled and checked).
pub fn run_on(
    pool: &rayon::ThreadPool,
    inputs: &[Input],
    mapper: &dyn LineMapper,
    options: &Options,
    sinks: Sinks<'_>,
) -> Result<Stats, RunError> {
    let started = Instant::now();
    let plan = plan_for(options, sinks.seen.as_deref(), sinks.out_file.is_some())
        .map_err(RunError::Refused)?;
    let mut run = Run::start(plan, inputs, mapper.note_names(), options, sinks)?;
    let dedup = run.drain(pool, inputs, mapper, options)?;
    let mut stats = run.finish(pool, dedup)?;
    stats.seconds = started.elapsed().as_secs_f64();
    Ok(stats)
}

/// A run under way: its plan, where its results go, and what it keeps
/// until the end.
struct Run<'r, 'i> {
    plan: Plan,
    maps: Vec<&'i [u8]>,
    writer: Writer<'i>,
    out: &'r mut dyn Write,
    out_file: Option<File>,
    /// In bulk against a store, to a stream: the output until the join.
    spool: Option<Spool>,
    rejects: &'r mut dyn RejectSink,
    set_aside: SetAside<'r>,
    progress: &'r dyn Progress,
    /// A store joined with the whole run at the end.
    bulk: Option<Bulk<'r>>,
    /// A store consulted batch by batch.
    live: Option<Live<'r>>,
}

impl<'r, 'i> Run<'r, 'i> {
    /// Sets up the sinks and the store as `plan` says.
    fn start(
        plan: Plan,
        inputs: &'i [Input],
        note_names: &'i [Note],
        options: &Options,
        sinks: Sinks<'r>,
    ) -> Result<Run<'r, 'i>, RunError> {
        let Sinks {
            out,
            out_file,
            rejects,
            set_aside,
            progress,
            seen,
            forget,
        } = sinks;
        let (bulk, live) = match (plan.seen, seen) {
            (SeenMode::Bulk, store) => (store.map(|store| Bulk { store, forget }), None),
            (SeenMode::Live, Some(store)) => {
                (None, Some(Live::new(store).map_err(RunError::Seen)?))
            }
            _ => (None, None),
        };
        let spool = match plan.spools {
            true => Some(
                Spool::create(&options.temp_dir)
                    .map_err(|e| RunError::Spill(SpillError::creating(&options.temp_dir, e)))?,
            ),
            false => None,
        };
        Ok(Run {
            plan,
            maps: inputs
                .iter()
                .map(|i| i.bytes().unwrap_or_default())
                .collect(),
            writer: Writer::new(inputs, options, note_names, plan.seen),
            out,
            out_file,
            spool,
            rejects,
            set_aside,
            progress,
            bulk,
            live,
        })
    }

    /// Reads, maps and decides every batch on the pool (the producer's
    /// thread) while this thread writes them; returns the dedup stage,
    /// which still owes the writer its last classes.
    fn drain(
        &mut self,
        pool: &rayon::ThreadPool,
        inputs: &'i [Input],
        mapper: &dyn LineMapper,
        options: &Options,
    ) -> Result<Option<Dedup>, RunError> {
        let plan = self.plan;
        let committer = Committer::default();
        let halt = Halt::default();
        let live = self.live.as_ref();
        let maps = &self.maps;
        let writer = &mut self.writer;
        let target = target(&mut self.spool, &mut *self.out);
        let rejects = &mut *self.rejects;
        let set_aside = &mut self.set_aside;
        let progress = self.progress;
        let (result, dedup, committed) = std::thread::scope(|scope| {
            let (sender, receiver) = mpsc::sync_channel::<Result<Batch<'_>, RunError>>(1);
            let (recycle, recycled) = mpsc::channel::<(Buffers, Fates)>();
            let halt = &halt;
            let producer = scope.spawn(move || {
                let producer = Producer {
                    pool,
                    inputs,
                    mapper,
                    options,
                    plan,
                    maps,
                    live,
                    halt,
                };
                producer.run(&sender, &recycled)
            });
            let committer = &committer;
            let committing = live
                .filter(|_| plan.commits_as_it_goes)
                .map(|live| scope.spawn(move || committer.run(live, options.commit_every)));
            let result = (|| {
                // Whatever ends this loop (the input's end, an error, a
                // closed output), `receiver` goes with it and `halt` is
                // raised on the way out: the producer, blocked on a full
                // channel or between batches, sees the run is over and
                // stops (#40).
                let _halt_on_exit = halt.raise_on_drop();
                for batch in receiver {
                    let batch = match batch {
                        Ok(batch) => batch,
                        // What was read before bad input is written: on
                        // standard output it stays (the exit code says the
                        // output is incomplete); an `-o` file is not put
                        // in place.
                        Err(e @ RunError::Input(_)) => {
                            writer.flush(target)?;
                            target.flush().map_err(RunError::Output)?;
                            return Err(e);
                        }
                        Err(e) => return Err(e),
                    };
                    for (processed, fates) in batch {
                        progress.advance(processed.chunk.input_bytes);
                        let fates_if_deduplicating = plan.deduplicates().then_some(&fates);
                        writer.write(
                            &processed,
                            fates_if_deduplicating,
                            target,
                            rejects,
                            set_aside,
                        )?;
                        // The producer may have stopped; the buffers then just go.
                        let _ = recycle.send((Buffers::from(processed), fates));
                    }
                    if options.line_buffered {
                        writer.flush(target)?;
                        target.flush().map_err(RunError::Output)?;
                        if let (Some(live), Some(admitted)) = (live, writer.admitted_mut()) {
                            live.admit(admitted);
                        }
                    }
                }
                Ok(())
            })();
            committer.stop();
            let committed = committing.map(|c| c.join());
            (result, producer.join(), committed)
        });
        let dedup = dedup.map_err(|_| RunError::WorkerPanicked)?;
        result?;
        if let Some(committed) = committed {
            committed
                .map_err(|_| RunError::WorkerPanicked)?
                .map_err(RunError::Seen)?;
        }
        Ok(dedup)
    }

    /// What only the end knows: the classes the dedup stage still owes, a
    /// live store's last keys staged, a bulk store's join; then the counts,
    /// settled.
    fn finish(mut self, pool: &rayon::ThreadPool, dedup: Option<Dedup>) -> Result<Stats, RunError> {
        // In bulk, the classes the store is joined with, taken from the
        // dedup stage at its end.
        let mut classes = self.bulk.is_some().then(store_join::Classes::default);
        let target = target(&mut self.spool, &mut *self.out);
        let class_line = self.writer.class_line();
        let (writer, capped) = (&mut self.writer, &mut self.set_aside.capped);
        // A spilled class past its cap is set aside as the output writes it.
        let capped_class = |output: &[u8]| match capped {
            Some(capped) => capped
                .write_all(output)
                .and_then(|()| capped.write_all(b"\n"))
                .map_err(RunError::SetAside),
            None => Ok(()),
        };
        let finished = match dedup {
            Some(dedup) => Some(
                dedup
                    .finish(
                        pool,
                        &self.maps,
                        classes.as_mut(),
                        class_line,
                        |owed| match owed {
                            Owed::Class(output, count) => writer.write_class(output, count, target),
                            Owed::Lines(lines, classes) => {
                                writer.write_class_lines(lines, classes, target)
                            }
                        },
                        capped_class,
                    )
                    .map_err(|e| match e {
                        FinishError::Write(e) => e,
                        FinishError::Spill(e) => RunError::Spill(e),
                    })?,
            ),
            None => None,
        };
        self.writer.flush(target)?;
        if let Some(live) = &self.live {
            // What is left to commit goes in when the output is in place.
            if let Some(admitted) = self.writer.admitted_mut() {
                live.admit(admitted);
            }
            live.stage_pending().map_err(RunError::Seen)?;
        }
        let held = match (self.bulk, classes) {
            (Some(bulk), Some(classes)) => {
                let marks = self.writer.header_marks();
                let (held, bytes_out) = remove_held(
                    pool,
                    bulk,
                    classes,
                    marks,
                    self.spool,
                    self.out,
                    &self.out_file,
                )?;
                self.writer.stats_mut().bytes_out = bytes_out;
                Some(held)
            }
            _ => None,
        };
        self.rejects.finish().map_err(RunError::Rejects)?;
        let mut stats = self.writer.into_stats();
        settle(&mut stats, finished, held, self.live.is_some())?;
        Ok(stats)
    }
}

/// Where the writer writes: the spool when there is one, else the output.
fn target<'t>(spool: &'t mut Option<Spool>, out: &'t mut dyn Write) -> &'t mut dyn Write {
    match spool {
        Some(spool) => spool,
        None => out,
    }
}

/// The counts only the end knows, in one place: the spill's survivors
/// (unique) and the rest of its lines (duplicates or capped); the classes
/// a store held in bulk, taken from unique and duplicates to seen. Then
/// the invariant is checked: every line read is counted exactly once.
fn settle(
    stats: &mut Stats,
    finished: Option<Finished>,
    held: Option<store_join::Held>,
    live: bool,
) -> Result<(), RunError> {
    if let Some(Finished {
        survivors,
        capped,
        spill: Some(spill),
    }) = finished
    {
        stats.unique += survivors;
        stats.capped += capped;
        stats.duplicates += spill.records - survivors - capped;
        stats.spill = Some(spill);
    }
    if live {
        stats.seen.get_or_insert(0);
    }
    if let Some(held) = held {
        stats.expired += held.expired;
        stats.unique -= held.classes;
        stats.duplicates -= held.lines - held.classes;
        stats.seen = Some(held.lines);
    }
    match stats.balances() {
        true => Ok(()),
        false => Err(RunError::Unbalanced(Box::new(stats.clone()))),
    }
}

/// In bulk: joins the run's classes with the store, removes the lines of
/// the classes it holds from the output (where it lies, or from the spool
/// as it is copied out) while the store's next run is staged. Returns how
/// many classes and lines the store held, and the output's bytes.
fn remove_held(
    pool: &rayon::ThreadPool,
    Bulk { store, forget }: Bulk<'_>,
    classes: store_join::Classes,
    header_marks: &[u64],
    spool: Option<Spool>,
    out: &mut dyn Write,
    out_file: &Option<File>,
) -> Result<(store_join::Held, u64), RunError> {
    let joined = store_join::join(pool, store, classes).map_err(RunError::Seen)?;
    let verdicts = &joined.verdicts;
    let (staged, written) = std::thread::scope(|scope| {
        let staging = scope.spawn(|| joined.stage(store, forget));
        let written = match (spool, out_file) {
            (Some(spool), _) => spool.write_unheld(verdicts, header_marks, out),
            (None, Some(file)) => out
                .flush()
                .and_then(|()| store_join::remove_held(file, verdicts, header_marks)),
            (None, None) => Ok(0),
        };
        (staging.join(), written)
    });
    staged
        .map_err(|_| RunError::WorkerPanicked)?
        .map_err(RunError::Seen)?;
    Ok((verdicts.held(), written.map_err(RunError::Output)?))
}

/// The writer's word to the producer that the run is over, whichever way
/// it ended: the producer looks before each batch (and the closed channel
/// stops it at its next hand-over), so no thread waits for a writer that
/// is gone.
#[derive(Default)]
struct Halt(AtomicBool);

impl Halt {
    fn raised(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// A guard that raises the halt when dropped, on any way out.
    fn raise_on_drop(&self) -> impl Drop + '_ {
        struct Raise<'h>(&'h Halt);
        impl Drop for Raise<'_> {
            fn drop(&mut self) {
                self.0.0.store(true, Ordering::Release);
            }
        }
        Raise(self)
    }
}

/// The thread that commits a live store's admitted keys every so often,
/// until told to stop.
#[derive(Default)]
struct Committer {
    stopped: std::sync::Mutex<bool>,
    wake: std::sync::Condvar,
}

impl Committer {
    /// Commits every `every` until [`Committer::stop`].
    fn run(&self, live: &Live<'_>, every: std::time::Duration) -> Result<(), StoreError> {
        let mut stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let (guard, _) = self
                .wake
                .wait_timeout_while(stopped, every, |stopped| !*stopped)
                .unwrap_or_else(|p| p.into_inner());
            stopped = guard;
            if *stopped {
                return Ok(());
            }
            live.commit()?;
        }
    }

    fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.wake.notify_all();
    }
}

/// The producer's side of a run: chunks, mapped on the pool, then decided.
struct Producer<'r, 'a, 's> {
    pool: &'r rayon::ThreadPool,
    inputs: &'a [Input],
    mapper: &'r dyn LineMapper,
    options: &'r Options,
    plan: Plan,
    maps: &'r [&'a [u8]],
    /// A seen store consulted batch by batch.
    live: Option<&'r Live<'s>>,
    /// Raised when the writer stopped: no further batch is made.
    halt: &'r Halt,
}

impl<'a> Producer<'_, 'a, '_> {
    /// Sends batches until the input ends, an error, or the writer stops;
    /// returns the dedup stage, which still owes the writer its last classes.
    fn run(
        self,
        sender: &mpsc::SyncSender<Result<Batch<'a>, RunError>>,
        recycled: &mpsc::Receiver<(Buffers, Fates)>,
    ) -> Option<Dedup> {
        let options = self.options;
        let plan = self.plan;
        let mut dedup = plan
            .deduplicates()
            .then(|| Dedup::new(&plan, options, total_bytes(self.inputs)));
        // Only deduplication needs hashes; mapping writes every line anyway.
        let hasher = key_hasher();
        let sites = SiteNumbers::new();
        let hashes = Hashes {
            set: plan.deduplicates().then_some(&hasher),
            fingerprints: plan.seen == SeenMode::Live,
            sites: plan.caps.then_some(&sites),
        };
        let hasher = hashes.set;
        let mut chunks = match options.line_buffered {
            true => Chunks::line_buffered(self.inputs),
            false => Chunks::new(self.inputs),
        }
        .binary_as_text(options.binary_as_text);
        let batch_len = options.threads.max(1) * CHUNKS_PER_THREAD;
        let mut sent = 0;
        loop {
            if self.halt.raised() {
                return dedup;
            }
            if let (Some(dedup), Some(live)) = (&mut dedup, self.live)
                && dedup.wants_forgetting()
            {
                match live.commit_through(sent, self.halt) {
                    Ok(true) => dedup.forget_committed(),
                    Ok(false) => return None, // the writer stopped
                    Err(e) => {
                        let _ = sender.send(Err(RunError::Seen(e)));
                        return None;
                    }
                }
            }
            let chunks = match chunks.next_batch(batch_len) {
                Ok(chunks) if chunks.is_empty() => return dedup,
                Ok(chunks) => chunks,
                Err(e) => {
                    let _ = sender.send(Err(RunError::Input(e)));
                    return dedup;
                }
            };
            let work: Vec<_> = chunks
                .into_iter()
                .map(|chunk| (chunk, recycled.try_recv().unwrap_or_default()))
                .collect();
            let batch: Batch<'a> = self.pool.install(|| {
                work.into_par_iter()
                    .map(|(chunk, (buffers, fates))| {
                        let p = process(chunk, buffers, self.mapper, hashes, options);
                        let fates = match hasher {
                            Some(_) => fates.group(&p.accepted),
                            None => fates,
                        };
                        (p, fates)
                    })
                    .collect()
            });
            if let Some(dedup) = &mut dedup
                && let Err(e) = dedup.decide(self.pool, &batch, self.maps, self.live)
            {
                let _ = sender.send(Err(e));
                return None;
            }
            if sender.send(Ok(batch)).is_err() {
                return dedup; // the writer stopped
            }
            sent += 1;
        }
    }
}
