//! The first pass: every line, in input order, through the three RFC
//! rungs. Batches of the pipeline's chunks are fingerprinted in parallel
//! ([`super::chunk_prints`]) and counted into the string rung's keys and
//! the syntax and scheme rungs' class tables, each batch while the next is
//! fingerprinted; a crawl index's captures are counted beside them.
//!
//! It knows the inputs, the chunker and the rungs; nothing of the protocol
//! steps, which start from the scheme rung's table it leaves.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use rayon::prelude::*;

use super::StepReport;
use super::chunk_prints::{ChunkPrints, Skipped, print_chunk};
use super::classes::{Classes, Print};
use super::examples::examples;
use super::judged::CaptureTable;
use super::lines::Reading;
use super::steps::{RFC_RUNGS, Step, rung_index, step_report};
use crate::line::crawl_index::IndexLines;
use crate::normalize::{Normalizer, Rung};
use crate::pipeline::chunks::{Chunk, Chunks, Line, LineRules};
use crate::pipeline::hash::PrintHasher;
use crate::pipeline::input::{Input, InputError, total_bytes};
use crate::pipeline::{CHUNKS_PER_THREAD, Progress, RunError};

/// The first pass's totals: the string rung's keys, and a class table for
/// the syntax and the scheme rungs. Arrays are in the order of [`RFC_RUNGS`].
pub(super) struct RungCounts {
    /// The string rung's keys, when there is no crawl index (whose
    /// [`Captures`](crate::report::evidence::Captures) keep them).
    pub(super) strings: HashSet<Print, PrintHasher>,
    pub(super) tables: [Classes; 2],
    pub(super) rejected: [u64; 3],
    pub(super) rejected_by_reason: HashMap<Cow<'static, str>, u64>,
    pub(super) time: [Duration; 3],
    /// The lines looked at: not blank, not a header, and in the sample
    /// when it samples.
    pub(super) looked_at: u64,
    pub(super) skipped: Skipped,
    /// For a crawl index: its captures of content.
    pub(super) captures: Option<CaptureTable>,
}

impl RungCounts {
    /// The class table of `rung`; the string rung keeps only its keys.
    fn table(&self, rung: Rung) -> Option<&Classes> {
        rung_index(rung).checked_sub(1).map(|t| &self.tables[t])
    }

    /// Counts a batch of chunks, in input order, each rung on its own task.
    fn count(&mut self, printed: &[ChunkPrints<'_>]) {
        for chunk in printed {
            self.looked_at += chunk.lines.len() as u64;
            self.skipped += chunk.skipped;
            for reason in &chunk.rejected_by_reason {
                *self.rejected_by_reason.entry(reason.clone()).or_default() += 1;
            }
            for (t, d) in self.time.iter_mut().zip(chunk.time) {
                *t += d;
            }
        }
        let [string_rejected, rejected @ ..] = &mut self.rejected;
        let (strings, captures) = (&mut self.strings, &mut self.captures);
        let tables = &mut self.tables;
        rayon::join(
            || match captures {
                // A crawl index's captures know every spelling: one table
                // serves the string rung and the URLs.
                Some(captures) => {
                    for chunk in printed {
                        captures.count(chunk, string_rejected);
                    }
                }
                None => {
                    for &p in printed.iter().flat_map(|chunk| &chunk.prints[0]) {
                        match p {
                            0 => *string_rejected += 1,
                            p => _ = strings.insert(p),
                        }
                    }
                }
            },
            || {
                tables
                    .par_iter_mut()
                    .zip(rejected.par_iter_mut())
                    .enumerate()
                    .for_each(|(t, (table, rejected))| {
                        for chunk in printed {
                            count_rung(table, rejected, chunk, t + 1);
                        }
                    })
            },
        );
    }

    /// The string rung's distinct lines.
    fn strings(&self) -> usize {
        match &self.captures {
            Some(table) => table.captures.spellings(),
            None => self.strings.len(),
        }
    }

    /// Makes room for the spellings of about `lines` lines at once.
    fn expect_lines(&mut self, lines: usize) {
        if let Some(table) = &mut self.captures {
            table.captures.reserve(lines);
        }
    }
}

/// The first pass: batches of the pipeline's chunks are fingerprinted in
/// parallel, and each batch is counted while the next one is fingerprinted.
pub(super) fn count_rungs<'a>(
    inputs: &'a [Input],
    reading: &Reading<'_, 'a>,
    progress: &dyn Progress,
) -> Result<RungCounts, RunError> {
    let rungs = [Rung::Syntax, Rung::Scheme].map(Normalizer::new);
    let mut counts = RungCounts {
        strings: HashSet::default(),
        tables: Default::default(),
        rejected: [0; 3],
        rejected_by_reason: HashMap::new(),
        time: [Duration::ZERO; 3],
        looked_at: 0,
        skipped: Skipped::default(),
        captures: reading.options.index.map(|_| CaptureTable::default()),
    };
    let mut chunks = Chunks::new(inputs);
    let batch_len = rayon::current_num_threads() * CHUNKS_PER_THREAD;
    let print_batch = |batch: Vec<Chunk<'a>>| -> Result<Vec<ChunkPrints<'a>>, RunError> {
        let bytes: u64 = batch.iter().map(|c| c.input_bytes).sum();
        let printed = batch
            .into_par_iter()
            .map(|chunk| print_chunk(chunk, &rungs, reading))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|source| too_large(inputs, source))?;
        progress.advance(bytes);
        Ok(printed)
    };
    let mut pending: Vec<ChunkPrints<'a>> = Vec::new();
    let mut first_batch = true;
    loop {
        let batch = chunks.next_batch(batch_len).map_err(RunError::Input)?;
        if batch.is_empty() {
            break;
        }
        for chunk in &batch {
            learn_layout(&reading.lines, chunk, inputs)?;
        }
        let (printed, ()) = rayon::join(|| print_batch(batch), || counts.count(&pending));
        pending = printed?;
        if std::mem::take(&mut first_batch)
            && let Some(lines) = expected_lines(&pending, total_bytes(inputs))
        {
            counts.expect_lines(lines);
        }
    }
    counts.count(&pending);
    Ok(counts)
}

/// The lines to expect in inputs of `total` bytes, from the first batch's
/// lines per byte; `None` when the size is not known (a stream).
fn expected_lines(first: &[ChunkPrints<'_>], total: Option<u64>) -> Option<usize> {
    let lines: u64 = first.iter().map(|c| c.lines.len() as u64).sum();
    let bytes: u64 = first.iter().map(|c| c.chunk.input_bytes).sum();
    let total = u128::from(total?);
    let expected = total * u128::from(lines) / u128::from(bytes.max(1));
    Some(usize::try_from(expected).unwrap_or(usize::MAX))
}

/// Reads the layout of a CDX input from the header line of its first
/// chunk, if it has one.
pub(crate) fn learn_layout(
    lines: &IndexLines,
    chunk: &Chunk<'_>,
    inputs: &[Input],
) -> Result<(), RunError> {
    if chunk.offset != 0 {
        return Ok(());
    }
    let first = chunk
        .lines(LineRules {
            header: false,
            max_line_bytes: usize::MAX,
        })
        .next();
    let Some((_, _, Line::Text(first))) = first else {
        return Ok(());
    };
    lines.learn_layout(chunk.source, first).map_err(|why| {
        RunError::Input(InputError::new(
            inputs[chunk.source].name(),
            std::io::Error::other(why),
        ))
    })
}

/// The error for an input too large to place its lines in (over 1 TiB).
fn too_large(inputs: &[Input], source: usize) -> RunError {
    RunError::Input(InputError::new(
        inputs[source].name(),
        std::io::Error::other("too large for the ladder to index (over 1 TiB)"),
    ))
}

/// Counts one chunk's lines into rung `r`'s table, in input order.
fn count_rung(table: &mut Classes, rejected: &mut u64, chunk: &ChunkPrints<'_>, r: usize) {
    for (i, &p) in chunk.prints[r].iter().enumerate() {
        if p == 0 {
            *rejected += 1;
            continue;
        }
        let below = r.checked_sub(1).map_or(0, |b| chunk.prints[b][i]);
        table.absorb(p, below, 1, || chunk.line_at(i));
    }
}

/// The RFC rungs' lines of the table, from the first pass's `counts`.
pub(super) fn rung_reports(
    steps: &[Step],
    counts: &RungCounts,
    reading: &Reading<'_, '_>,
) -> Vec<StepReport> {
    let mut reports: Vec<StepReport> = Vec::with_capacity(steps.len());
    for (step, rung) in steps.iter().zip(RFC_RUNGS) {
        let n = reading.options.examples;
        let (distinct, examples) = match counts.table(rung) {
            Some(table) => (
                table.len() as u64,
                examples(table, &table.lines, reading, step, step.below(steps), n),
            ),
            None => (counts.strings() as u64, Vec::new()),
        };
        let i = rung_index(rung);
        let report = step_report(
            step,
            distinct,
            counts.rejected[i],
            counts.time[i],
            examples,
            &reports,
        );
        reports.push(report);
    }
    reports
}

/// Why the scheme rung rejected lines, with how many: most first, then by
/// reason.
pub(super) fn sorted_reasons(
    by_reason: HashMap<Cow<'static, str>, u64>,
) -> Vec<(Cow<'static, str>, u64)> {
    let mut sorted: Vec<(Cow<'static, str>, u64)> = by_reason.into_iter().collect();
    sorted.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    sorted
}

#[cfg(test)]
mod tests {
    use super::super::Options;
    use super::super::testing::{INDEX, LINES, index_options, input};
    use super::*;
    use crate::pipeline::Unwatched;

    /// The first pass's counts of `text` with `options`.
    fn counted(text: &str, options: &Options) -> RungCounts {
        let inputs = [input(text)];
        let reading = Reading::new(&inputs, options);
        count_rungs(&inputs, &reading, &Unwatched).expect("counted")
    }

    #[test]
    fn the_first_pass_counts_each_rungs_keys_and_rejects() {
        let counts = counted(LINES, &Options::default());
        assert_eq!(counts.strings(), 7);
        let distinct = [Rung::Syntax, Rung::Scheme].map(|r| counts.table(r).unwrap().len());
        assert_eq!(distinct, [5, 4]);
        assert!(counts.table(Rung::String).is_none());
        assert_eq!((counts.rejected, counts.looked_at), ([1, 1, 1], 8));
        assert_eq!(counts.skipped.blank, 1);
    }

    #[test]
    fn a_crawl_index_counts_its_spellings_among_its_captures() {
        let counts = counted(INDEX, &index_options());
        let captures = counts
            .captures
            .as_ref()
            .expect("an index keeps its captures");
        // Every spelling but the line that is no URI; the 404 is one.
        assert_eq!((counts.strings(), captures.captures.urls()), (7, 6));
        assert!(counts.strings.is_empty());
    }

    #[test]
    fn the_rungs_lines_of_the_table_show_their_merges() {
        let inputs = [input(LINES)];
        let options = Options::default();
        let reading = Reading::new(&inputs, &options);
        let counts = count_rungs(&inputs, &reading, &Unwatched).unwrap();
        let reports = rung_reports(&super::super::steps(&options), &counts, &reading);
        let rows: Vec<(&str, u64, i64, usize)> = (reports.iter())
            .map(|r| (r.name.as_str(), r.distinct, r.collapsed, r.examples.len()))
            .collect();
        assert_eq!(
            rows,
            [
                ("string", 7, 0, 0),
                ("syntax", 5, 2, 2),
                ("scheme", 4, 1, 1)
            ]
        );
    }

    #[test]
    fn reasons_are_sorted_most_lines_first_then_by_name() {
        let by_reason = HashMap::from([("b".into(), 2), ("a".into(), 2), ("c".into(), 5)]);
        let sorted = sorted_reasons(by_reason);
        let sorted: Vec<(&str, u64)> = sorted.iter().map(|(r, n)| (&r[..], *n)).collect();
        assert_eq!(sorted, [("c", 5), ("a", 2), ("b", 2)]);
    }
}
