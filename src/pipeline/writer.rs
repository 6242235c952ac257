//! The serial end of the pipeline: chunks come in input order with their
//! fates; it numbers lines, reports rejected ones, writes what is written
//! through one large buffer, and counts everything in the [`Stats`].
//!
//! It knows chunks, fates and counts; not why a line was rejected or how a
//! fate was decided.

use std::collections::HashMap;
use std::io::Write;

use super::dedup::{Fate, Fates};
use super::input::Input;
use super::output::RejectSink;
use super::stats::Stats;
use super::store_join::{Admitted, SeenMode};
use super::worker::{NotKept, Processed, Skipped};
use super::{Emit, Mode, Note, NoteKind, Options, RunError};

/// Whether an input's first chunk says it is no list of URIs (a text
/// file of something else): most of its lines are no URI at all.
fn looks_unlike_uris(first: &Processed<'_>) -> bool {
    let lines = u64::from(first.lines) - first.blank;
    let malformed = first
        .rejected
        .iter()
        .filter(|r| r.error.fault().is_malformed())
        .count() as u64;
    lines >= 4 && malformed * 2 > lines
}

/// One line of `--emit verdict`: what became of one input line.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Verdict<'p> {
    /// An accepted line: its fate, and its key.
    Decided(Fate, &'p [u8]),
    /// A line that was not accepted.
    NotKept(NotKept<'p>),
}

impl Verdict<'_> {
    /// The verdict's word: `new`, `dup`, `seen`, `rejected`, ….
    pub(crate) fn word(&self) -> &'static str {
        match self {
            Verdict::Decided(Fate::First, _) => "new",
            Verdict::Decided(Fate::Duplicate, _) => "dup",
            Verdict::Decided(Fate::Seen, _) => "seen",
            Verdict::Decided(Fate::Capped, _) => "capped",
            Verdict::Decided(Fate::Expired, _) => "expired",
            Verdict::Decided(Fate::Spilled, _) => unreachable!("verdicts are never spilled"),
            Verdict::NotKept(NotKept::Rejected(_)) => "rejected",
            Verdict::NotKept(NotKept::Skipped(Skipped::Blank)) => "blank",
            Verdict::NotKept(NotKept::Skipped(Skipped::Filtered)) => "filtered",
            Verdict::NotKept(NotKept::Skipped(Skipped::Binary)) => "binary",
        }
    }

    /// Appends the verdict's line, `word<TAB>key` (or the reason a line
    /// was rejected, or the word alone), and its line feed.
    pub(crate) fn push_line(&self, out: &mut Vec<u8>) {
        self.push_line_as(self.word(), out);
    }

    /// [`Verdict::push_line`] with `word` for the verdict's word.
    pub(crate) fn push_line_as(&self, word: &str, out: &mut Vec<u8>) {
        out.extend_from_slice(word.as_bytes());
        match self {
            Verdict::Decided(_, key) => {
                out.push(b'\t');
                out.extend_from_slice(key);
            }
            Verdict::NotKept(NotKept::Rejected(error)) => {
                out.push(b'\t');
                out.extend_from_slice(error.to_string().as_bytes());
            }
            Verdict::NotKept(NotKept::Skipped(_)) => {}
        }
        out.push(b'\n');
    }
}

/// The verdict of every line of `p`, in input order, each accepted line's
/// by its fate (`fate(i)` of accepted line `i`).
pub(crate) fn verdicts<'p>(
    p: &'p Processed<'_>,
    fate: impl Fn(usize) -> Fate + 'p,
) -> impl Iterator<Item = Verdict<'p>> {
    let mut others = p.others().peekable();
    let mut accepted = p.accepted.iter().enumerate().peekable();
    // Both are in input order: a merge keeps it.
    std::iter::from_fn(move || {
        let other_first = match (others.peek(), accepted.peek()) {
            (Some(&(start, _)), Some((_, a))) => start < a.line.start,
            (other, _) => other.is_some(),
        };
        match other_first {
            true => others.next().map(|(_, other)| Verdict::NotKept(other)),
            false => accepted
                .next()
                .map(|(i, a)| Verdict::Decided(fate(i), p.key(a))),
        }
    })
}

/// The lines a dedup run sets aside, each to its own writer when asked.
#[derive(Default)]
pub struct SetAside<'s> {
    /// The first line of each class past its site's cap, as it was read
    /// (`--capped`): what the next batch can take.
    pub capped: Option<&'s mut dyn Write>,
    /// Each duplicate line, as `file:line<TAB>file:first<TAB>raw`, `first`
    /// the line its class first occurred on (`--dupes`).
    pub dupes: Option<&'s mut dyn Write>,
}

/// Where each class first occurred, by its key's fingerprint: its input
/// and line number. Kept only for `--dupes`: about 100 bytes a class at
/// its peak, while the table doubles (measured: 4M classes, +410 MB).
type Firsts = HashMap<u128, (usize, u64), ahash::RandomState>;

/// How much output to gather before a write.
const WRITE_BYTES: usize = 1 << 20;

/// Line numbers, rejects, output and stats.
pub(crate) struct Writer<'i> {
    inputs: &'i [Input],
    mode: Mode,
    stats: Stats,
    /// The input of the last chunk seen, and how many lines of it came before.
    source: usize,
    lines_before: u64,
    /// Output lines gathered for one large write.
    pending: Vec<u8>,
    /// The names of the mapper's note bits.
    note_names: &'i [Note],
    /// One output line per input line ([`Options::aligned`]).
    aligned: bool,
    /// The classes are written at the end, sorted ([`Options::sort`]).
    sorted: bool,
    /// Class lines written so far (dedup), and for each header line
    /// written, how many came before it: what tells the two apart in
    /// the output.
    class_lines: u64,
    header_marks: Vec<u64>,
    /// Against a live seen store: the fingerprints of the classes written
    /// since they were last handed over, to commit.
    admitted: Option<Admitted>,
    /// For `--dupes`: where each class first occurred.
    firsts: Firsts,
}

/// How a class written at the end becomes a line, as `--emit` says:
/// shared by the threads that make a sorted run's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClassLine {
    /// Its output (`canonical`, `first`).
    Output,
    /// Its size, a tab, its key (`count`).
    Counted,
    /// No line (`nothing`).
    Nothing,
}

impl ClassLine {
    /// Appends the line of the class whose output is `output` and size
    /// `count` to `lines`.
    pub(crate) fn push(self, output: &[u8], count: u64, lines: &mut Vec<u8>) {
        match self {
            ClassLine::Nothing => return,
            ClassLine::Counted => {
                lines.extend_from_slice(count.to_string().as_bytes());
                lines.push(b'\t');
            }
            ClassLine::Output => {}
        }
        lines.extend_from_slice(output);
        lines.push(b'\n');
    }
}

impl<'i> Writer<'i> {
    /// A writer, keeping what a seen store used as `seen` needs.
    pub(crate) fn new(
        inputs: &'i [Input],
        options: &Options,
        note_names: &'i [Note],
        seen: SeenMode,
    ) -> Writer<'i> {
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
            pending: Vec::with_capacity(WRITE_BYTES + 4096),
            note_names,
            aligned: options.aligned,
            sorted: options.sort,
            class_lines: 0,
            header_marks: Vec::new(),
            admitted: (seen == SeenMode::Live)
                .then(|| Admitted::new(options.per_site_budget.is_some())),
            firsts: Firsts::default(),
        }
    }

    /// Reports, writes and counts one chunk's lines; `fates` when deduplicating.
    pub(crate) fn write(
        &mut self,
        p: &Processed<'_>,
        fates: Option<&Fates>,
        out: &mut dyn Write,
        rejects: &mut dyn RejectSink,
        aside: &mut SetAside<'_>,
    ) -> Result<(), RunError> {
        if p.chunk.source != self.source {
            self.source = p.chunk.source;
            self.lines_before = 0;
        }
        let name = self.inputs[p.chunk.source].name();
        if p.chunk.offset == 0 && p.chunk.binary {
            self.stats.binary.push(name.to_string());
        } else if p.chunk.offset == 0 && looks_unlike_uris(p) {
            self.stats.unlike_uris.push(name.to_string());
        }
        for r in &p.rejected {
            let line = self.lines_before + u64::from(r.index) + 1;
            *self.stats.rejected.entry(r.error.reason()).or_default() += 1;
            rejects
                .reject(name, line, &r.error, p.line(r.line))
                .map_err(RunError::Rejects)?;
        }
        if let Some(header) = p.header {
            self.stats.header += 1;
            self.header_marks.push(self.class_lines);
            self.emit(&[p.line(header)], out)?;
        }
        match (self.mode, fates) {
            (Mode::Dedup(Emit::Verdict), Some(fates)) => self.write_verdicts(p, fates, out)?,
            (Mode::Dedup(emit), Some(fates)) => self.write_decided(p, emit, fates, out)?,
            _ => self.write_mapped(p, out)?,
        }
        if let Some(fates) = fates {
            self.set_aside(p, fates, aside)
                .map_err(RunError::SetAside)?;
        }
        for (bit, note) in self.note_names.iter().enumerate() {
            if p.notes[bit] > 0 {
                let tally = match note.kind {
                    NoteKind::Repair => &mut self.stats.repaired,
                    NoteKind::Rules => &mut self.stats.rules,
                };
                *tally.entry(note.name.into()).or_default() += p.notes[bit];
            }
        }
        self.stats.passed += p.passed;
        self.stats.blank += p.blank;
        self.stats.binary_lines += p.binary;
        self.stats.filtered += p.filtered;
        self.stats.lines += u64::from(p.lines);
        self.stats.bytes_in += p.chunk.bytes.len() as u64;
        self.lines_before += u64::from(p.lines);
        Ok(())
    }

    /// Mapping: every accepted line's output; aligned, an empty line where
    /// each rejected or filtered line was.
    fn write_mapped(&mut self, p: &Processed<'_>, out: &mut dyn Write) -> Result<(), RunError> {
        let mut gaps = p.others().map(|(start, _)| start).peekable();
        for a in &p.accepted {
            while self.aligned && gaps.next_if(|&start| start < a.line.start).is_some() {
                self.emit(&[], out)?;
            }
            // A blank line is counted as blank, though written.
            self.stats.unique += u64::from(!a.blank);
            self.emit(&[p.output(a)], out)?;
        }
        if self.aligned {
            for _ in gaps {
                self.emit(&[], out)?;
            }
        }
        Ok(())
    }

    /// Deduplicating: what is written of each class's first line.
    fn write_decided(
        &mut self,
        p: &Processed<'_>,
        emit: Emit,
        fates: &Fates,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        for (i, a) in p.accepted.iter().enumerate() {
            let fate = fates.get(i);
            self.note_fate(p, i, fate);
            let bytes = match (emit, fate) {
                // Counted as the spill decides, at the end.
                (_, Fate::Duplicate | Fate::Seen | Fate::Capped | Fate::Spilled) => continue,
                // Written at the end, in order: see `write_class`.
                (_, Fate::First | Fate::Expired) if self.sorted => continue,
                (Emit::Canonical, Fate::First | Fate::Expired) => p.output(a),
                (Emit::First, Fate::First | Fate::Expired) => p.line(a.line),
                // Counts are known only at the end: see `write_class`.
                (Emit::Count | Emit::Nothing | Emit::Verdict, Fate::First | Fate::Expired) => {
                    continue;
                }
            };
            self.class_lines += 1;
            self.emit(&[bytes], out)?;
        }
        Ok(())
    }

    /// `--emit verdict`: one line for every line of the chunk, in order.
    fn write_verdicts(
        &mut self,
        p: &Processed<'_>,
        fates: &Fates,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        for i in 0..p.accepted.len() {
            self.note_fate(p, i, fates.get(i));
        }
        for verdict in verdicts(p, |i| fates.get(i)) {
            verdict.push_line(&mut self.pending);
            self.written(out)?;
        }
        Ok(())
    }

    /// Writes the chunk's capped and duplicate lines where `aside` says.
    fn set_aside(
        &mut self,
        p: &Processed<'_>,
        fates: &Fates,
        aside: &mut SetAside<'_>,
    ) -> std::io::Result<()> {
        if aside.capped.is_none() && aside.dupes.is_none() {
            return Ok(());
        }
        let bytes: &[u8] = &p.chunk.bytes;
        // Line numbers only for --dupes: newlines counted as the lines go.
        let (mut counted_to, mut index) = (0, 0);
        for (i, a) in p.accepted.iter().enumerate() {
            let fate = fates.get(i);
            if let (Fate::Capped, Some(capped)) = (fate, aside.capped.as_mut()) {
                capped.write_all(p.line(a.line))?;
                capped.write_all(b"\n")?;
            }
            let Some(dupes) = aside.dupes.as_mut() else {
                continue;
            };
            let start = a.line.start as usize;
            index += memchr::memchr_iter(b'\n', &bytes[counted_to..start]).count() as u64;
            counted_to = start;
            let here = (p.chunk.source, self.lines_before + index + 1);
            // Against a store the worker made the fingerprint already.
            let print =
                p.prints.get(i).copied().unwrap_or_else(|| {
                    u128::from_be_bytes(crate::fingerprint::fingerprint(p.key(a)))
                });
            let first = *self.firsts.entry(print).or_insert(here);
            if first != here && matches!(fate, Fate::Duplicate | Fate::Spilled) {
                let name = |source: usize| self.inputs[source].name();
                write!(
                    dupes,
                    "{}:{}\t{}:{}\t",
                    name(here.0),
                    here.1,
                    name(first.0),
                    first.1
                )?;
                dupes.write_all(p.line(a.line))?;
                dupes.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Counts a decided line, and keeps what a seen store needs of it.
    fn note_fate(&mut self, p: &Processed<'_>, i: usize, fate: Fate) {
        match fate {
            Fate::First | Fate::Expired => {
                self.stats.unique += 1;
                if let Some(admitted) = &mut self.admitted {
                    admitted.push(p.prints[i], fate == Fate::Expired, p.accepted[i].site);
                }
                if fate == Fate::Expired {
                    self.stats.expired += 1;
                }
            }
            Fate::Duplicate => self.stats.duplicates += 1,
            Fate::Seen => *self.stats.seen.get_or_insert(0) += 1,
            Fate::Capped => self.stats.capped += 1,
            Fate::Spilled => {}
        }
    }

    /// Adds one output line made of `parts`; writes when enough has gathered.
    fn emit(&mut self, parts: &[&[u8]], out: &mut dyn Write) -> Result<(), RunError> {
        for part in parts {
            self.pending.extend_from_slice(part);
        }
        self.pending.push(b'\n');
        self.written(out)
    }

    /// Writes what has gathered once it is enough for one large write.
    fn written(&mut self, out: &mut dyn Write) -> Result<(), RunError> {
        if self.pending.len() >= WRITE_BYTES {
            self.flush(out)?;
        }
        Ok(())
    }

    /// One class written at the end: its output, or for `--emit count` its
    /// size and key.
    pub(crate) fn write_class(
        &mut self,
        output: &[u8],
        count: u64,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        self.class_lines += 1;
        self.class_line().push(output, count, &mut self.pending);
        self.written(out)
    }

    /// The lines of `classes` classes written at the end, made by
    /// [`Writer::class_line`] on other threads.
    pub(crate) fn write_class_lines(
        &mut self,
        lines: &[u8],
        classes: u64,
        out: &mut dyn Write,
    ) -> Result<(), RunError> {
        self.class_lines += classes;
        self.flush(out)?;
        self.stats.bytes_out += lines.len() as u64;
        out.write_all(lines).map_err(RunError::Output)
    }

    /// How a class written at the end becomes its line.
    pub(crate) fn class_line(&self) -> ClassLine {
        match self.mode {
            Mode::Dedup(Emit::Count) => ClassLine::Counted,
            Mode::Dedup(Emit::Nothing) => ClassLine::Nothing,
            _ => ClassLine::Output,
        }
    }

    /// The fingerprints of the classes written since the last call (a live
    /// seen store's), emptied.
    pub(crate) fn admitted_mut(&mut self) -> Option<&mut Admitted> {
        self.admitted.as_mut()
    }

    /// For each header line written, how many class lines came before it.
    pub(crate) fn header_marks(&self) -> &[u64] {
        &self.header_marks
    }

    /// Writes what has gathered.
    pub(crate) fn flush(&mut self, out: &mut dyn Write) -> Result<(), RunError> {
        self.stats.bytes_out += self.pending.len() as u64;
        out.write_all(&self.pending).map_err(RunError::Output)?;
        self.pending.clear();
        Ok(())
    }

    /// The counts, once everything is written.
    pub(crate) fn into_stats(self) -> Stats {
        self.stats
    }

    /// The counts so far, to complete with what only the end knows.
    pub(crate) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }
}
