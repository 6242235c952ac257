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
//!
//! The types a caller meets are in their own modules: `mapper` (what the
//! engine asks of a [`LineMapper`]), `rejection` (why it refuses a line)
//! and `api` (a run's options, sinks,
//! progress and errors), re-exported here.

mod api;
mod budget;
pub(crate) mod caps;
pub(crate) mod chunks;
pub mod compress;
mod dedup;
mod format;
pub(crate) mod hash;
pub mod input;
mod input_error;
mod mapper;
pub mod output;
pub(crate) mod place;
mod plan;
mod rejection;
mod set;
mod sort;
pub(crate) mod spill;
pub mod stats;
mod store_join;
mod stream;
pub mod warc;
mod worker;
mod writer;

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use rayon::prelude::*;

use crate::store::{Store, StoreError};
use caps::SiteNumbers;
use chunks::Chunks;
pub use chunks::looks_binary;
use dedup::{ChunkFates, Dedup, FinishError, Finished, Owed};
use hash::key_hasher;
use input::{Input, total_bytes};
use output::RejectSink;
pub use plan::Refused;
// What the seen service (`crate::service`) answers a body with.
pub(crate) use dedup::{Fate, Fates};
pub use format::Format;
use plan::{OutputKind, Plan, StoreAccess};
pub use spill::SpillError;
use stats::Stats;
pub use store_join::SpoolError;
use store_join::{Bulk, Live, SeenMode, Spool};
pub(crate) use worker::{Buffers, Hashes, Processed, process};
pub use writer::SetAside;
use writer::Writer;
pub(crate) use writer::{Verdict, verdicts};

pub use api::{Emit, Invalid, MAX_LINE_BYTES, Mode, Options, Progress, RunError, Sinks, Unwatched};
pub use budget::Budget;
pub use mapper::{LineMapper, Mapped, Note, NoteKind};
pub use rejection::{Fault, Rejection, Within};

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
type Batch<'a> = Vec<ChunkFates<'a>>;

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
                let live = Live::new(store, options.per_site_budget);
                (None, Some(live.map_err(RunError::Seen)?))
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
        let sites = self.live.and_then(Live::site_numbers).unwrap_or(&sites);
        let hashes = Hashes {
            set: plan.deduplicates().then_some(&hasher),
            fingerprints: plan.seen == SeenMode::Live,
            sites: plan.caps.then_some(sites),
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
