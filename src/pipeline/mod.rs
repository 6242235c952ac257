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

pub mod dedup;
pub mod input;
pub mod reader;
pub mod stats;
pub mod worker;
pub mod writer;

use std::io::{self, Write};
use std::sync::mpsc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

use crate::error::InvalidUri;
use dedup::DedupSet;
use input::{Input, InputError};
use reader::Chunks;
use stats::Stats;
use worker::{Processed, key_hasher, process};
use writer::RejectSink;

/// Turns one line into its key.
pub trait LineMapper: Sync {
    /// Appends the key of `line` to `out` and returns `true`, or returns
    /// `false` when the key is `line` itself (leaving `out` as it was), or
    /// says why the line is rejected (leaving `out` as it was).
    fn map_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<bool, InvalidUri>;
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
}

/// Why a run stopped.
#[derive(Debug)]
pub enum RunError {
    Input(InputError),
    /// Writing the output failed.
    Output(io::Error),
    /// Writing the rejects report failed.
    Rejects(io::Error),
}

/// How many chunks each worker gets per batch.
const CHUNKS_PER_THREAD: usize = 4;

/// Runs the engine over `inputs`, writing to `out` and reporting rejected
/// lines to `rejects`. Output is the same bytes for any number of threads.
pub fn run(
    inputs: &[Input],
    mapper: &dyn LineMapper,
    options: &Options,
    out: &mut dyn Write,
    rejects: &mut dyn RejectSink,
) -> Result<Stats, RunError> {
    let started = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| RunError::Input(InputError::new("<threads>", io::Error::other(e))))?;
    let mut consumer = Consumer::new(inputs, options);
    let progress = progress_bar(inputs, options.progress);

    let result = std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<Result<Vec<Processed<'_>>, InputError>>(1);
        let invalid = options.invalid;
        scope.spawn(move || {
            let hasher = key_hasher();
            let hasher = matches!(options.mode, Mode::Dedup(_)).then_some(&hasher);
            let mut chunks = Chunks::new(inputs);
            let batch_len = options.threads.max(1) * CHUNKS_PER_THREAD;
            loop {
                let mut batch = Vec::with_capacity(batch_len);
                while batch.len() < batch_len {
                    match chunks.next_chunk() {
                        Ok(Some(chunk)) => batch.push(chunk),
                        Ok(None) => break,
                        Err(e) => {
                            let _ = sender.send(Err(e));
                            return;
                        }
                    }
                }
                if batch.is_empty() {
                    return;
                }
                let processed = pool.install(|| {
                    batch
                        .into_par_iter()
                        .map(|chunk| process(chunk, mapper, hasher, invalid))
                        .collect()
                });
                if sender.send(Ok(processed)).is_err() {
                    return; // the consumer stopped
                }
            }
        });
        // The receiver is dropped when this closure returns, which stops the producer.
        let receiver = receiver;
        for batch in receiver.iter() {
            for processed in batch.map_err(RunError::Input)? {
                progress.inc(processed.chunk.bytes.len() as u64);
                consumer.consume(&processed, out, rejects)?;
            }
        }
        Ok(())
    });
    progress.finish_and_clear();
    result?;
    consumer.finish(out, rejects)?;
    let mut stats = consumer.stats;
    stats.seconds = started.elapsed().as_secs_f64();
    debug_assert!(stats.balances(), "{stats:?}");
    Ok(stats)
}

/// A bar of bytes read, on standard error when it is a terminal.
fn progress_bar(inputs: &[Input], enabled: bool) -> ProgressBar {
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

/// The serial end of the pipeline: line numbers, dedup, output, stats.
struct Consumer<'i> {
    inputs: &'i [Input],
    mode: Mode,
    set: DedupSet,
    stats: Stats,
    /// The input of the last chunk seen, and how many lines of it came before.
    source: usize,
    lines_before: u64,
}

impl<'i> Consumer<'i> {
    fn new(inputs: &'i [Input], options: &Options) -> Consumer<'i> {
        let stats = Stats {
            files: inputs.iter().map(|i| i.name().to_string()).collect(),
            threads: options.threads,
            deduplicated: matches!(options.mode, Mode::Dedup(_)),
            ..Stats::default()
        };
        Consumer {
            inputs,
            mode: options.mode,
            set: DedupSet::new(),
            stats,
            source: 0,
            lines_before: 0,
        }
    }

    fn consume(
        &mut self,
        p: &Processed<'_>,
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
        for a in &p.accepted {
            let key = p.key(a);
            let bytes = match self.mode {
                Mode::Map => key,
                Mode::Dedup(emit) => {
                    if !self.set.insert(a.hash, key) {
                        self.stats.duplicates += 1;
                        continue;
                    }
                    match emit {
                        Emit::Canonical => key,
                        Emit::First => p.line(a.line),
                        Emit::Count => {
                            // Counts are known only at the end: see `finish`.
                            self.stats.unique += 1;
                            continue;
                        }
                    }
                }
            };
            self.stats.unique += 1;
            self.stats.bytes_out += bytes.len() as u64 + 1;
            out.write_all(bytes)
                .and_then(|()| out.write_all(b"\n"))
                .map_err(RunError::Output)?;
        }
        self.stats.passed += p.passed;
        self.stats.blank += p.blank;
        self.stats.lines += u64::from(p.lines);
        self.stats.bytes_in += p.chunk.bytes.len() as u64;
        self.lines_before += u64::from(p.lines);
        Ok(())
    }

    fn finish(
        &mut self,
        out: &mut dyn Write,
        rejects: &mut dyn RejectSink,
    ) -> Result<(), RunError> {
        if self.mode == Mode::Dedup(Emit::Count) {
            for (key, count) in self.set.classes() {
                let mut line = count.to_string().into_bytes();
                line.push(b'\t');
                self.stats.bytes_out += (line.len() + key.len() + 1) as u64;
                out.write_all(&line)
                    .and_then(|()| out.write_all(key))
                    .and_then(|()| out.write_all(b"\n"))
                    .map_err(RunError::Output)?;
            }
        }
        rejects.finish().map_err(RunError::Rejects)
    }
}
