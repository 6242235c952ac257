//! The bulk engine: inputs cut into chunks at newlines, chunks mapped by
//! rayon workers into per-chunk arenas of keys and hashes, keys deduplicated
//! in input order, results written through one large buffer.
//!
//! It knows nothing of RFC rules: what a line's key is, or why it is
//! rejected, is the [`LineMapper`]'s business.
//!
//! ```text
//! reader (mmap / stdin blocks) ─▶ rayon workers (map + hash) ─▶ dedup set ─▶ ordered writer
//! ```
//! Workers run one batch ahead of the consumer, so the serial part (dedup
//! and writing) overlaps with the parallel part.
//!
//! With a memory limit, a set that reaches it takes no new key: from then
//! on, lines of classes it does not hold go to the [`spill`] (partition
//! files by hash), which is deduplicated partition by partition at the end
//! and merged back in input order after what the set wrote: the same bytes.

pub mod dedup;
pub mod input;
pub mod reader;
pub mod spill;
pub mod stats;
pub mod worker;
pub mod writer;

use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::error::InvalidUri;
use dedup::{DedupSet, shard_of};
use input::{Input, InputError};
use reader::{Chunk, Chunks};
use spill::{Spill, SpillError};
use stats::Stats;
use worker::{Buffers, Fate, Processed, key_hasher, process};
use writer::RejectSink;

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
    /// Appends what it makes of `line` to `out` and says where it is, or says
    /// why the line is rejected (leaving `out` as it was).
    fn map_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<Mapped, InvalidUri>;

    /// The names of the bits of [`Mapped::notes`].
    fn note_names(&self) -> &[&'static str] {
        &[]
    }
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// The key (the canonical form).
    Canonical,
    /// The first original line of the class.
    First,
    /// `N<TAB>key`, like `uniq -c`, once the whole input is read.
    Count,
}

/// What to do with a line the mapper rejects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Invalid {
    /// Report it and leave it out.
    Reject,
    /// Keep it as written (the string rung); count it as passed.
    Pass,
}

/// How to run.
pub struct Options {
    pub mode: Mode,
    pub invalid: Invalid,
    /// Worker threads.
    pub threads: usize,
    /// Show a progress bar on standard error.
    pub progress: bool,
    /// Longer lines are rejected (never truncated).
    pub max_line_bytes: usize,
    /// When deduplicating: the bytes the set of keys may take. Past it, new
    /// keys spill to partition files under `temp_dir` (same output).
    pub memory_limit: Option<u64>,
    pub temp_dir: PathBuf,
}

/// The default `max_line_bytes`: far above any URL a browser sends, far
/// below what could exhaust memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Why a run stopped.
#[derive(Debug)]
pub enum RunError {
    Input(InputError),
    /// Writing the output failed.
    Output(io::Error),
    /// Writing the rejects report failed.
    Rejects(io::Error),
    /// Writing or reading the spill files failed (a full disk, say).
    Spill(SpillError),
    /// A bug: the run cannot be completed.
    Internal(String),
}

/// How many chunks each worker gets per batch: enough lines that each dedup
/// shard gets a run of them.
const CHUNKS_PER_THREAD: usize = 8;

/// A batch of processed chunks, in input order.
type Batch<'a> = Vec<Processed<'a>>;

/// Runs the engine over `inputs`, writing to `out` and reporting rejected
/// lines to `rejects`. Output is the same bytes for any number of threads.
///
/// Two threads of control: the producer reads a batch of chunks, maps them on
/// the pool, deduplicates them on the pool (shards in parallel), and hands
/// the batch over; the caller's thread writes it while the next batch is
/// being made.
pub fn run(
    inputs: &[Input],
    mapper: &dyn LineMapper,
    options: &Options,
    out: &mut dyn Write,
    rejects: &mut dyn RejectSink,
) -> Result<Stats, RunError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| RunError::Input(InputError::new("<threads>", io::Error::other(e))))?;
    run_on(&pool, inputs, mapper, options, out, rejects)
}

/// [`run`] on a thread pool the caller keeps (`options.threads` then only
/// sizes the batches), for callers that run the engine many times.
pub fn run_on(
    pool: &rayon::ThreadPool,
    inputs: &[Input],
    mapper: &dyn LineMapper,
    options: &Options,
    out: &mut dyn Write,
    rejects: &mut dyn RejectSink,
) -> Result<Stats, RunError> {
    let started = Instant::now();
    let maps: Vec<&[u8]> = inputs
        .iter()
        .map(|i| i.bytes().unwrap_or_default())
        .collect();
    let mut writer = Writer::new(inputs, options);
    writer.note_names = mapper.note_names().to_vec();
    let progress = progress_bar(inputs, options.progress);
    let dedup = matches!(options.mode, Mode::Dedup(_));

    let (result, set) = std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<Result<Batch<'_>, InputError>>(1);
        let (recycle, recycled) = mpsc::channel::<Buffers>();
        let maps = &maps;
        let producer = scope.spawn(move || {
            let hasher = key_hasher();
            let hasher = dedup.then_some(&hasher);
            let mut set = DedupSet::new(options.mode == Mode::Dedup(Emit::Count));
            let mut chunks = Chunks::new(inputs);
            let batch_len = options.threads.max(1) * CHUNKS_PER_THREAD;
            let mut reserved = false;
            // Once the set reaches the memory limit it takes no new key:
            // lines of classes not in it are spilled from then on. (A limit
            // below an empty set's tables spills every line.)
            let over_limit = |set: &DedupSet| {
                options
                    .memory_limit
                    .is_some_and(|limit| set.memory_bytes() as u64 > limit)
            };
            let mut full = over_limit(&set);
            loop {
                let batch = match read_batch(&mut chunks, batch_len) {
                    Ok(batch) if batch.is_empty() => return set,
                    Ok(batch) => batch,
                    Err(e) => {
                        let _ = sender.send(Err(e));
                        return set;
                    }
                };
                let work: Vec<_> = batch
                    .into_iter()
                    .map(|chunk| (chunk, recycled.try_recv().unwrap_or_default()))
                    .collect();
                let batch: Batch<'_> = pool.install(|| {
                    work.into_par_iter()
                        .map(|(chunk, buffers)| process(chunk, buffers, mapper, hasher, options))
                        .collect()
                });
                if dedup && !reserved && !full {
                    set.reserve(expected_lines(inputs, &batch, options.memory_limit));
                    reserved = true;
                }
                if dedup {
                    pool.install(|| dedup_batch(&mut set, &batch, maps, full));
                    full = over_limit(&set);
                }
                if sender.send(Ok(batch)).is_err() {
                    return set; // the writer stopped
                }
            }
        });
        let result = (|| {
            for batch in receiver.iter() {
                for processed in batch.map_err(RunError::Input)? {
                    progress.inc(processed.chunk.bytes.len() as u64);
                    writer.write(&processed, options, out, rejects)?;
                    // The producer may have stopped; the buffers then just go.
                    let _ = recycle.send(Buffers::from(processed));
                }
            }
            Ok(())
        })();
        // The receiver is gone once the closure above returned: the producer
        // stops at its next hand-over.
        (result, producer.join())
    });
    progress.finish_and_clear();
    let set = set.map_err(|_| {
        RunError::Internal("a worker thread panicked; no output can be trusted".into())
    })?;
    result?;
    writer.finish_in_memory(&set, &maps, out)?;
    drop(set);
    writer.finish_spill(pool, options, out)?;
    writer.flush(out)?;
    rejects.finish().map_err(RunError::Rejects)?;
    let mut stats = writer.stats;
    stats.seconds = started.elapsed().as_secs_f64();
    debug_assert!(stats.balances(), "{stats:?}");
    Ok(stats)
}

/// The memory a spill's partitions are sized and deduplicated within: the
/// limit, but never below [`MIN_SPILL_MEMORY`]. Splitting partitions that
/// small would cost a file per few lines (and file creation is slow on many
/// disks) to save memory no one is short of.
fn spill_limit(options: &Options) -> u64 {
    options
        .memory_limit
        .unwrap_or(u64::MAX)
        .max(MIN_SPILL_MEMORY)
}

const MIN_SPILL_MEMORY: u64 = 64 << 20;

/// The number of lines the whole input likely has, from the first batch,
/// capped: room for that many keys is reserved up front so the dedup tables
/// never grow by copying. Standard input has no known size: nothing then.
fn expected_lines(
    inputs: &[Input],
    first_batch: &[Processed<'_>],
    memory_limit: Option<u64>,
) -> usize {
    // Never more than a quarter of the memory limit in reserved slots (of
    // about 26 bytes a key at most 5/8 full).
    let cap = memory_limit.map_or(1 << 26, |limit| (limit / 4 / 26).min(1 << 26) as usize);
    let sizes: Option<usize> = inputs.iter().map(|i| i.bytes().map(<[u8]>::len)).sum();
    let (lines, bytes) = first_batch.iter().fold((0, 0), |(l, b), p| {
        (l + p.lines as usize, b + p.chunk.bytes.len())
    });
    match sizes {
        // Most inputs repeat some lines: room for three in four to be
        // distinct; a shard that needs more grows.
        Some(total) if bytes > 0 => (total / bytes).saturating_mul(lines).min(cap) / 4 * 3,
        _ => 0,
    }
}

/// Up to `len` chunks, in order.
fn read_batch<'a>(chunks: &mut Chunks<'a>, len: usize) -> Result<Vec<Chunk<'a>>, InputError> {
    let mut batch = Vec::with_capacity(len);
    while batch.len() < len {
        match chunks.next_chunk()? {
            Some(chunk) => batch.push(chunk),
            None => break,
        }
    }
    Ok(batch)
}

/// Marks the first line of every class in the batch, all shards at once:
/// each shard takes its lines chunk by chunk, in input order. Before it looks
/// up a line, it asks for the table slot of the line 2 × [`PREFETCH_AHEAD`]
/// places on, and for the key bytes that slot points to for the line
/// [`PREFETCH_AHEAD`] places on, so the cache misses of a large set overlap.
///
/// A `full` set takes no new key: a line whose class it does not hold is
/// [`Fate::Spilled`].
fn dedup_batch(set: &mut DedupSet, batch: &[Processed<'_>], maps: &[&[u8]], full: bool) {
    set.shards_mut()
        .par_iter_mut()
        .enumerate()
        .for_each_init(Vec::new, |run, (s, shard)| {
            run.clear();
            for (c, p) in batch.iter().enumerate() {
                let lines = &p.by_shard[p.shard_starts[s] as usize..p.shard_starts[s + 1] as usize];
                run.extend(lines.iter().map(|&i| (c, i as usize)));
            }
            for (k, &(c, i)) in run.iter().enumerate() {
                if let Some(&(c_ahead, i_ahead)) = run.get(k + 2 * PREFETCH_AHEAD) {
                    shard.prefetch(batch[c_ahead].accepted[i_ahead].hash);
                }
                if let Some(&(c_ahead, i_ahead)) = run.get(k + PREFETCH_AHEAD) {
                    shard.prefetch_key(batch[c_ahead].accepted[i_ahead].hash, maps);
                }
                let p = &batch[c];
                let accepted = &p.accepted[i];
                let key = p.dedup_key(accepted);
                let fate = match full {
                    false if shard.insert(accepted.hash, key, maps) => Fate::First,
                    true if !shard.count_if_present(accepted.hash, key, maps) => Fate::Spilled,
                    _ => Fate::Duplicate,
                };
                p.set_fate(i, fate);
            }
        });
}

/// How many lines ahead the dedup loop prefetches: enough to cover a
/// memory access's latency with the work of the lines in between.
const PREFETCH_AHEAD: usize = 8;

/// A bar of bytes read, on standard error when it is a terminal.
pub(crate) fn progress_bar(inputs: &[Input], enabled: bool) -> ProgressBar {
    use std::io::IsTerminal;
    if !enabled || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let total: Option<u64> = inputs
        .iter()
        .map(|i| i.bytes().map(|b| b.len() as u64))
        .sum();
    let bar = match total {
        Some(total) => ProgressBar::new(total),
        None => ProgressBar::no_length(),
    };
    let style = ProgressStyle::with_template(
        "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

/// The serial end of the pipeline: line numbers, rejects, output, stats.
struct Writer<'i> {
    inputs: &'i [Input],
    mode: Mode,
    stats: Stats,
    /// The input of the last chunk seen, and how many lines of it came before.
    source: usize,
    lines_before: u64,
    /// For `--emit count`: the shard of each class, in first-seen order.
    order: Vec<u16>,
    /// Output lines gathered for one large write.
    pending: Vec<u8>,
    /// The names of the mapper's note bits.
    note_names: Vec<&'static str>,
    /// The lines the full set could not take, once there are any.
    spill: Option<Spill>,
}

/// How much output to gather before a write.
const WRITE_BYTES: usize = 1 << 20;

impl<'i> Writer<'i> {
    fn new(inputs: &'i [Input], options: &Options) -> Writer<'i> {
        let stats = Stats {
            files: inputs.iter().map(|i| i.name().to_string()).collect(),
            threads: options.threads,
            deduplicated: matches!(options.mode, Mode::Dedup(_)),
            ..Stats::default()
        };
        Writer {
            inputs,
            mode: options.mode,
            stats,
            source: 0,
            lines_before: 0,
            order: Vec::new(),
            pending: Vec::with_capacity(WRITE_BYTES + 4096),
            note_names: Vec::new(),
            spill: None,
        }
    }

    fn write(
        &mut self,
        p: &Processed<'_>,
        options: &Options,
        out: &mut dyn Write,
        rejects: &mut dyn RejectSink,
    ) -> Result<(), RunError> {
        if p.chunk.source != self.source {
            self.source = p.chunk.source;
            self.lines_before = 0;
        }
        let name = self.inputs[p.chunk.source].name();
        for r in &p.rejected {
            let line = self.lines_before + u64::from(r.index) + 1;
            *self
                .stats
                .rejected
                .entry(r.error.kind().reason())
                .or_default() += 1;
            rejects
                .reject(name, line, &r.error, p.line(r.line))
                .map_err(RunError::Rejects)?;
        }
        for (i, a) in p.accepted.iter().enumerate() {
            let emit = match self.mode {
                Mode::Map => None,
                Mode::Dedup(emit) => Some(emit),
            };
            // Mapping writes every line; dedup, what the set decided.
            let bytes = match emit.map(|emit| (emit, p.fate(i))) {
                None => p.output(a),
                Some((_, Fate::Duplicate)) => {
                    self.stats.duplicates += 1;
                    continue;
                }
                Some((emit, Fate::Spilled)) => {
                    self.spill_line(p, a, emit, options)?;
                    continue;
                }
                Some((Emit::Canonical, Fate::First)) => p.output(a),
                Some((Emit::First, Fate::First)) => p.line(a.line),
                Some((Emit::Count, Fate::First)) => {
                    // Counts are known only at the end: see `finish_in_memory`.
                    self.stats.unique += 1;
                    self.order.push(shard_of(a.hash) as u16);
                    continue;
                }
            };
            self.stats.unique += 1;
            self.emit(&[bytes], out)?;
        }
        for (bit, name) in self.note_names.iter().enumerate() {
            if p.notes[bit] > 0 {
                *self.stats.repaired.entry(name).or_default() += p.notes[bit];
            }
        }
        self.stats.passed += p.passed;
        self.stats.blank += p.blank;
        self.stats.lines += u64::from(p.lines);
        self.stats.bytes_in += p.chunk.bytes.len() as u64;
        self.lines_before += u64::from(p.lines);
        Ok(())
    }

    /// Adds one output line made of `parts`; writes when enough has gathered.
    fn emit(&mut self, parts: &[&[u8]], out: &mut dyn Write) -> Result<(), RunError> {
        for part in parts {
            self.pending.extend_from_slice(part);
        }
        self.pending.push(b'\n');
        if self.pending.len() >= WRITE_BYTES {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Writes a line the full set could not take to the spill (made on the
    /// first such line), with what to write if it is the first of its class.
    fn spill_line(
        &mut self,
        p: &Processed<'_>,
        a: &worker::Accepted,
        emit: Emit,
        options: &Options,
    ) -> Result<(), RunError> {
        let spill = match &mut self.spill {
            Some(spill) => spill,
            None => {
                let limit = spill_limit(options);
                let rest = self.total_bytes().map_or(0, |t| t - self.stats.bytes_in);
                let spill = Spill::create(&options.temp_dir, rest, limit).map_err(|error| {
                    RunError::Spill(SpillError {
                        dir: options.temp_dir.clone(),
                        written: 0,
                        needed: None,
                        error,
                    })
                })?;
                self.spill.insert(spill)
            }
        };
        let output = match emit {
            Emit::Canonical => a.output.map(|span| span.of(&p.arena)),
            // The line itself, unless it is the key.
            Emit::First => a.key.map(|_| p.line(a.line)),
            Emit::Count => None,
        };
        let pushed = spill.push(a.hash, p.key(a), output);
        pushed.map_err(|e| RunError::Spill(self.with_estimate(e)))
    }

    /// The inputs' total size, when every input is a file.
    fn total_bytes(&self) -> Option<u64> {
        self.inputs
            .iter()
            .map(|i| i.bytes().map(|b| b.len() as u64))
            .sum()
    }

    /// A spill error, with the space the whole spill would need, projected
    /// from the share of the input read: the partitions, then as much again
    /// at most for the survivors.
    fn with_estimate(&self, mut error: SpillError) -> SpillError {
        let (Some(total), read) = (self.total_bytes(), self.stats.bytes_in) else {
            return error;
        };
        if read > 0 {
            let projected = (error.written as f64 * total as f64 / read as f64) as u64;
            error.needed = Some(projected.saturating_mul(2));
        }
        error
    }

    fn flush(&mut self, out: &mut dyn Write) -> Result<(), RunError> {
        self.stats.bytes_out += self.pending.len() as u64;
        out.write_all(&self.pending).map_err(RunError::Output)?;
        self.pending.clear();
        Ok(())
    }

    /// For `--emit count`, the classes of the set with their sizes: they
    /// come before any spilled class, whose first lines are later.
    fn finish_in_memory(
        &mut self,
        set: &DedupSet,
        maps: &[&[u8]],
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        if self.mode == Mode::Dedup(Emit::Count) {
            let order = std::mem::take(&mut self.order);
            for (key, count) in set.classes_in_order(&order, maps) {
                self.write_class(key, count, out)?;
            }
        }
        Ok(())
    }

    /// The spilled classes, deduplicated partition by partition, in input
    /// order. Call once the set is dropped: this uses the memory it held.
    fn finish_spill(
        &mut self,
        pool: &rayon::ThreadPool,
        options: &Options,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        let Some(spill) = self.spill.take() else {
            return Ok(());
        };
        let limit = spill_limit(options);
        let mut survivors = 0u64;
        let mut write_error = None;
        let finished = spill.finish(pool, limit, |output, count| {
            survivors += 1;
            self.write_class(output, count, out).map_err(|e| {
                write_error = Some(e);
                io::Error::other("the output could not be written")
            })
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        let spilled = finished.map_err(|e| RunError::Spill(self.with_estimate(e)))?;
        self.stats.unique += survivors;
        self.stats.duplicates += spilled.records - survivors;
        self.stats.spill = Some(spilled);
        Ok(())
    }

    /// One class: its output, or for `--emit count` its size and key.
    fn write_class(
        &mut self,
        output: &[u8],
        count: u64,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        match self.mode {
            Mode::Dedup(Emit::Count) => {
                self.emit(&[count.to_string().as_bytes(), b"\t", output], out)
            }
            _ => self.emit(&[output], out),
        }
    }
}
