//! The ladder report: on the user's own lines, how many distinct keys each
//! rung and preset leaves, what each one merged (with real examples), and
//! how many merges each protocol transform adds on its own (with its
//! largest ones); and the sites the lines are on (distinct hosts and
//! registrable domains, the hosts with most lines).
//!
//! Two passes: every line is normalized at the three RFC rungs, then every
//! class of the scheme rung (one line each) through the protocol steps and
//! each transform alone. Each step's keys are counted as 128-bit fingerprints — a collision
//! among 10^9 keys has a probability near 10^-21, so the counts are the
//! counts `dedup` gives. Lines are addressed by their place (`Place`) in the
//! inputs: a mapped file's lines are read where they lie; standard input is
//! read as a stream, the pipeline's chunks, and only the lines a class
//! refers to are copied.
//!
//! It reads through the pipeline's input and chunker and the same line
//! preparation as `dedup` ([`Columns`]); it writes nothing itself.
//!
//! It knows no flags and no output format: the command line prints the
//! [`Report`].

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::ErrorKind;
use crate::line::crawl_index::{IndexFormat, IndexLines};
use crate::line::key::Site;
use crate::line::{ColumnScratch, Columns};
use crate::normalize::protocol::{PRESETS, Preset, Protocol, Transform, candidates};
use crate::normalize::{Normalizer, Rung, Scratch};
use crate::pipeline::chunks::{Chunk, ChunkBytes, Chunks, Line, LineRules};
use crate::pipeline::hash::{InMemoryPrints, PrintHasher};
use crate::pipeline::input::{Input, InputError, total_bytes};
use crate::pipeline::place::Place;
use crate::pipeline::{CHUNKS_PER_THREAD, MAX_LINE_BYTES, Progress, RunError, thread_pool};
use crate::report::evidence::{Captures, Contents, Judgement, Keyed, Level, UrlId};
use crate::rules::SiteRules;
use crate::uri::{SchemeHost, UriRef, mask_password};

/// What a step of the report is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// One of the RFC rungs: string, syntax, scheme.
    Rung(Rung),
    /// The scheme rung and a preset's transforms: a step of the ladder, or
    /// one beside it (`--preset ia`).
    Preset(&'static Preset),
    /// The last preset plus one transform (`--with`).
    PresetPlus(Transform),
    /// The step before plus the site rules (`--rules`, `--rules-clearurls`).
    Rules,
}

impl StepKind {
    /// `string`, `syntax`, `scheme`, `protocol:safe`, `+lowercase-path`, …
    pub fn name(self) -> String {
        match self {
            StepKind::Rung(rung) => rung.name().to_string(),
            StepKind::Preset(preset) => format!("protocol:{}", preset.name),
            StepKind::PresetPlus(t) => format!("+{}", t.name()),
            StepKind::Rules => "+rules".to_string(),
        }
    }
}

/// One step of the report.
#[derive(Clone, Debug)]
pub struct Step {
    pub kind: StepKind,
    normalizer: Normalizer,
    /// The index of the step it is compared with: the one before it on the
    /// ladder, the scheme rung for a preset beside it; none for the first.
    over: Option<usize>,
    /// Lines a crawler cannot fetch are rejected at it, as `dedup` rejects
    /// them for its preset ([`PresetStep::fetchable`]).
    fetchable: bool,
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct Options {
    /// How many example merges per step.
    pub examples: usize,
    /// Keep only hosts whose hash falls in this fraction (an estimate).
    pub sample: Option<f64>,
    /// One more step: the aggressive preset plus this transform.
    pub with: Option<Transform>,
    /// One more step beside the ladder: the scheme rung and a preset that
    /// is not a step of it.
    pub preset: Option<PresetStep>,
    pub threads: usize,
    /// Which column holds the URI and what is done to it first, as for `dedup`.
    pub columns: Columns,
    /// Longer lines are rejected (never truncated).
    pub max_line_bytes: usize,
    /// The first line of each input is a header, not looked at.
    pub header: bool,
    /// How many of the hosts with most lines to name.
    pub top_hosts: usize,
    /// Site rules: one more step with all of them, and each file's merges
    /// on its own.
    pub rules: Option<LadderRules>,
    /// The lines are a crawl index: judge each step's merges by the
    /// digests of what the URLs served ([`crate::report::evidence`]).
    pub index: Option<IndexFormat>,
}

/// The site rules a ladder measures: all of them together, and each file
/// alone, by name.
#[derive(Clone, Debug)]
pub struct LadderRules {
    pub all: SiteRules,
    pub files: Vec<(String, SiteRules)>,
}

/// A preset measured beside the ladder (`ia`).
#[derive(Clone, Copy, Debug)]
pub struct PresetStep {
    pub preset: &'static Preset,
    /// Whether `dedup` with this preset takes only the URIs a crawler can
    /// fetch ([`SchemeHost::fetchable`]): the step rejects the others too,
    /// so that its counts are `dedup`'s.
    pub fetchable: bool,
}

/// At most this many rules files are attributed merges one by one (each
/// one more normalization of every class).
pub const MAX_ATTRIBUTED_RULES_FILES: usize = 48;

impl Default for Options {
    fn default() -> Options {
        Options {
            examples: 5,
            sample: None,
            with: None,
            preset: None,
            threads: 1,
            columns: Columns::default(),
            max_line_bytes: MAX_LINE_BYTES,
            header: false,
            top_hosts: 10,
            rules: None,
            index: None,
        }
    }
}

/// A class new at a step: equal there, two distinct spellings below.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    /// Lines in the class.
    pub size: u64,
    /// The class's key at this step.
    pub key: String,
    /// Two original lines, distinct at the step below (passwords masked).
    pub spellings: Vec<String>,
    /// The rules or transforms of this step that changed them.
    pub joined_by: Vec<String>,
}

/// One line of the table.
#[derive(Clone, Debug)]
pub struct StepReport {
    pub kind: StepKind,
    /// The kind's name.
    pub name: String,
    /// The name of the step it is compared with: the one before it, or the
    /// scheme rung for a preset beside the ladder; none for the first.
    pub over: Option<String>,
    pub distinct: u64,
    /// Distinct keys fewer than the step it is compared with (0 for the
    /// first).
    pub collapsed: i64,
    pub rejected: u64,
    /// Time spent on this step's own work, all threads together.
    pub seconds: f64,
    pub examples: Vec<Merge>,
    /// For a crawl index: what the digests say of its merges.
    pub evidence: Option<Evidence>,
}

/// What one protocol transform does alone over the scheme rung.
#[derive(Clone, Debug)]
pub struct TransformMerges {
    pub transform: Transform,
    /// Distinct keys fewer than the scheme rung.
    pub merges: i64,
    /// Its largest merges, largest first.
    pub examples: Vec<Merge>,
    /// For a crawl index: what the digests say of the scheme rung plus it.
    pub evidence: Option<Evidence>,
}

/// What the digests of a crawl index say of one step's merges (see
/// [`crate::report::evidence`]).
#[derive(Clone, Debug)]
pub struct Evidence {
    /// The counts (its examples name URLs by number: the two lists below
    /// show them).
    pub counts: Judgement,
    pub false_examples: Vec<FalseExample>,
    pub missed_examples: Vec<MissedExample>,
}

/// A class of a step that holds pages which differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FalseExample {
    pub lines: u64,
    /// How many contents it holds.
    pub contents: u64,
    /// The earliest capture of each of its first contents.
    pub captures: Vec<Capture>,
}

/// One content still under several keys at a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissedExample {
    pub keys: u64,
    /// The earliest capture under each of its first keys.
    pub captures: Vec<Capture>,
}

/// A URL as an example shows it: its spelling (password masked) and the
/// digest of its first capture, with how many digests it served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capture {
    pub spelling: String,
    pub digest: String,
    pub digests: u32,
}

/// What a crawl index held: captures of content judged, lines that are
/// none, and the URLs and contents the captures make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceSummary {
    /// Captures of content (2xx or revisit, with a digest) judged.
    pub captures: u64,
    /// Lines that are no capture of content (another status, no digest,
    /// too long to read).
    pub not_content: u64,
    /// Captures of content whose URI the scheme rung rejects.
    pub rejected: u64,
    /// Distinct URLs (as spelt) among the captures judged.
    pub urls: u64,
    /// Contents they make (URLs joined by shared digests).
    pub contents: u64,
    /// URLs that served more than one digest (pages that changed).
    pub changing: u64,
}

/// The whole report. Every line read is one of: looked at, left out of
/// the sample, blank, a header, or in a binary input.
#[derive(Clone, Debug)]
pub struct Report {
    /// Every line of the inputs, as `dedup` counts them.
    pub lines_read: u64,
    /// The lines looked at: not blank, not a header, not in a binary
    /// input, and in the sample when it samples.
    pub lines: u64,
    /// Lines the sample left out.
    pub left_out: u64,
    pub blank: u64,
    /// The inputs' first lines, under `--header`.
    pub header: u64,
    /// Lines of inputs that look binary, not looked at.
    pub binary: u64,
    /// The sampled fraction, when the report is an estimate.
    pub sample: Option<f64>,
    pub steps: Vec<StepReport>,
    /// Why the scheme rung rejected lines, with how many: most first.
    pub rejected_by_reason: Vec<(&'static str, u64)>,
    /// For each protocol transform: what it merges alone over the scheme
    /// rung.
    pub attribution: Vec<TransformMerges>,
    /// For each rules file: distinct keys fewer than the scheme rung with
    /// that file's rules alone.
    pub rules_attribution: Vec<(String, i64)>,
    /// Distinct hosts of the scheme rung's canonical forms, and distinct
    /// registrable domains among them (Public Suffix List).
    pub hosts: u64,
    pub domains: u64,
    /// The hosts with most lines, most first (ties by name), with their
    /// lines.
    pub top_hosts: Vec<(String, u64)>,
    /// For a crawl index: what it held (each step's and transform's
    /// judgement is beside its counts).
    pub evidence: Option<EvidenceSummary>,
    pub seconds: f64,
}

/// The steps for `options`: the three RFC rungs, the presets, maybe `--with`
/// and the rules, each over the one before; then maybe a preset beside
/// them, over the scheme rung.
pub fn steps(options: &Options) -> Vec<Step> {
    fn climb(steps: &mut Vec<Step>, kind: StepKind, normalizer: Normalizer) {
        steps.push(Step {
            kind,
            normalizer,
            over: steps.len().checked_sub(1),
            fetchable: false,
        });
    }
    let mut steps = Vec::new();
    for rung in RFC_RUNGS {
        climb(&mut steps, StepKind::Rung(rung), Normalizer::new(rung));
    }
    for preset in ladder_presets() {
        let normalizer = Normalizer::with_protocol(Protocol::from(*preset));
        climb(&mut steps, StepKind::Preset(preset), normalizer);
    }
    if let (Some(t), Some(last)) = (options.with, ladder_presets().last()) {
        let mut protocol = Protocol::from(*last);
        protocol.add(t);
        let normalizer = Normalizer::with_protocol(protocol);
        climb(&mut steps, StepKind::PresetPlus(t), normalizer);
    }
    if let (Some(rules), Some(last)) = (&options.rules, steps.last()) {
        let normalizer = last
            .normalizer
            .clone()
            .with_rules(rules.all.clone().into_rewrite());
        climb(&mut steps, StepKind::Rules, normalizer);
    }
    if let Some(beside) = options.preset.filter(|p| !p.preset.ladder) {
        steps.push(Step {
            kind: StepKind::Preset(beside.preset),
            normalizer: Normalizer::with_protocol(Protocol::from(*beside.preset)),
            over: Some(rung_index(Rung::Scheme)),
            fetchable: beside.fetchable,
        });
    }
    steps
}

/// What a class is worked through alone, for the attribution: each
/// attributed transform on its own, then each rules file on its own.
struct Alone {
    transforms: Vec<Transform>,
    singles: Vec<Normalizer>,
    rules_files: Vec<Normalizer>,
}

impl Alone {
    fn new(options: &Options) -> Alone {
        let transforms = attributed();
        let singles = transforms
            .iter()
            .map(|&t| {
                let mut single = Protocol::none();
                single.add(t);
                Normalizer::with_protocol(single)
            })
            .collect();
        let rules_files = options
            .rules
            .iter()
            .flat_map(|r| &r.files)
            .take(MAX_ATTRIBUTED_RULES_FILES)
            .map(|(_, rules)| {
                Normalizer::with_protocol(Protocol::none()).with_rules(rules.clone().into_rewrite())
            })
            .collect();
        Alone {
            transforms,
            singles,
            rules_files,
        }
    }

    fn len(&self) -> usize {
        self.transforms.len() + self.rules_files.len()
    }
}

/// The rungs the first pass counts line by line, in order; the protocol
/// steps start from the last.
const RFC_RUNGS: [Rung; 3] = [Rung::String, Rung::Syntax, Rung::Scheme];

/// The presets that are steps: not the compatibility ones (`ia`).
fn ladder_presets() -> impl DoubleEndedIterator<Item = &'static Preset> {
    PRESETS.iter().filter(|p| p.ladder)
}

/// The transforms whose merges are attributed: every one in a step's preset.
fn attributed() -> Vec<Transform> {
    Transform::ALL
        .into_iter()
        .filter(|t| ladder_presets().any(|p| p.transforms().any(|u| u == *t)))
        .collect()
}

/// A fingerprint ([`InMemoryPrints::of`]); 0 means "rejected at this step".
type Print = u128;

/// The image of a class rejected at a step.
const REJECTED: Print = 0;

/// What a step remembers of one class.
#[derive(Clone, Copy)]
struct Class {
    size: u64,
    /// The step below's fingerprint of the class's first line (low bits).
    below: u64,
    first: Place,
    /// The first line whose fingerprint below differs from the first's, or
    /// [`NO_OTHER`] (kept as a plain place: classes are most of the memory).
    other: Place,
}

/// No line of the class differs below (yet).
const NO_OTHER: Place = Place::NONE;

/// The lines a table's classes refer to: in a mapped input they are read
/// where they lie; from standard input, which is read as a stream, they are
/// copied when a class first refers to them.
#[derive(Default)]
struct LineStore {
    copies: HashMap<Place, Range<usize>, PrintHasher>,
    bytes: Vec<u8>,
}

impl LineStore {
    /// Keeps `line` (at `place`, in `chunk`) if it would not outlive the chunk.
    fn keep(&mut self, chunk: &Chunk<'_>, place: Place, line: &[u8]) {
        if let ChunkBytes::Owned(_) = chunk.bytes {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(line);
            self.copies.insert(place, start..self.bytes.len());
        }
    }

    /// The line at `place`.
    fn line<'s>(&'s self, place: Place, maps: &[&'s [u8]]) -> &'s [u8] {
        if let Some(range) = self.copies.get(&place) {
            return &self.bytes[range.clone()];
        }
        let (input, offset) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        let rest = &maps[input][offset..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        line.strip_suffix(b"\r").unwrap_or(line)
    }
}

/// One step's classes, and the lines they refer to.
#[derive(Default)]
struct Classes {
    map: HashMap<Print, Class, PrintHasher>,
    lines: LineStore,
}

impl Classes {
    /// Adds `size` lines to the class of `print`, the first of them with
    /// fingerprint `below` at the step below. Called in input order, so
    /// `first` and `other` are the earliest such lines. `line` tells where
    /// that first line is; it is asked only when the class takes its place.
    fn absorb<'c, 'a: 'c>(
        &mut self,
        print: Print,
        below: Print,
        size: u64,
        line: impl FnOnce() -> LineAt<'c, 'a>,
    ) {
        let below = below as u64;
        let taken = match self.map.entry(print) {
            std::collections::hash_map::Entry::Occupied(mut entry) => {
                let class = entry.get_mut();
                class.size += size;
                if class.other != NO_OTHER || class.below == below {
                    return;
                }
                let line = line();
                class.other = line.place;
                line
            }
            std::collections::hash_map::Entry::Vacant(entry) => {
                let line = line();
                entry.insert(Class {
                    size,
                    below,
                    first: line.place,
                    other: NO_OTHER,
                });
                line
            }
        };
        if let Some((chunk, bytes)) = taken.in_chunk {
            self.lines.keep(chunk, taken.place, bytes);
        }
    }

    fn len(&self) -> usize {
        self.map.len()
    }
}

/// A line being counted: its place, and while its chunk is at hand, its bytes.
#[derive(Clone, Copy)]
struct LineAt<'c, 'a> {
    place: Place,
    in_chunk: Option<(&'c Chunk<'a>, &'c [u8])>,
}

/// The per-line fingerprints of one chunk at the three RFC rungs.
struct ChunkPrints<'a> {
    chunk: Chunk<'a>,
    /// Each line looked at: its span in the chunk (chunks are far below 4 GiB).
    lines: Vec<Range<u32>>,
    /// `prints[rung][line]`, in the order of [`RFC_RUNGS`].
    prints: [Vec<Print>; 3],
    /// For a crawl index, each line's digest hash; 0 for a line that is no
    /// capture of content.
    digests: Vec<u64>,
    /// Why each line the scheme rung rejects was rejected.
    rejected_by_reason: Vec<&'static str>,
    skipped: Skipped,
    time: [Duration; 3],
}

/// The lines read and not looked at, by why.
#[derive(Clone, Copy, Default)]
struct Skipped {
    left_out: u64,
    blank: u64,
    header: u64,
    binary: u64,
}

impl std::ops::AddAssign for Skipped {
    fn add_assign(&mut self, other: Skipped) {
        self.left_out += other.left_out;
        self.blank += other.blank;
        self.header += other.header;
        self.binary += other.binary;
    }
}

/// One class of the scheme rung, which the protocol steps start from.
#[derive(Clone, Copy)]
struct SchemeClass {
    first: Place,
    size: u64,
    print: Print,
}

/// How many scheme classes the second pass works as one task.
const CLASS_RUN: usize = 4096;

/// What the protocol steps and transforms make of a run of scheme classes.
struct ProtocolPrints {
    /// `images[step][class]`: each protocol step's fingerprint.
    images: Vec<Vec<Print>>,
    /// `rejected[step]`: the lines a site rule rejected at each protocol step.
    rejected: Vec<u64>,
    /// `alone[transform]`: the classes it changed (by index in the run),
    /// in order, with the fingerprints of their forms.
    alone: Vec<Vec<(u32, Print)>>,
    time: Vec<Duration>,
    /// The lines of each host of the run's classes.
    hosts: HostLines,
}

/// Lines by host.
type HostLines = HashMap<Box<[u8]>, u64, ahash::RandomState>;

/// What the report reads and how: the inputs' maps, the line preparation.
struct Reading<'r, 'a> {
    maps: Vec<&'a [u8]>,
    options: &'r Options,
    prints: InMemoryPrints,
    lines: IndexLines,
}

impl Reading<'_, '_> {
    /// Calls `with` on the URI `line` (of input `source`) stands for.
    fn with_uri<T>(
        &self,
        line: &[u8],
        source: usize,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, crate::InvalidUri>,
    ) -> Result<T, crate::InvalidUri> {
        self.lines.with_uri(line, source, scratch, with)
    }

    /// The digest of the content `line` says its URI served, if any.
    fn digest<'l>(&self, line: &'l [u8], source: usize) -> Option<Cow<'l, [u8]>> {
        self.lines.digest(line, source)
    }

    /// [`Reading::with_uri`] on the line at `place`, kept in `lines`.
    fn with_uri_at<T>(
        &self,
        place: Place,
        lines: &LineStore,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, crate::InvalidUri>,
    ) -> Result<T, crate::InvalidUri> {
        let (source, _) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        self.with_uri(lines.line(place, &self.maps), source, scratch, with)
    }

    /// The URI of the line at `place` as it entered the ladder (a column,
    /// repaired, resolved), or the line if it has none.
    fn spelling(&self, place: Place, lines: &LineStore) -> Vec<u8> {
        self.with_uri_at(place, lines, &mut ColumnScratch::default(), |uri| {
            Ok(uri.to_vec())
        })
        .unwrap_or_else(|_| lines.line(place, &self.maps).to_vec())
    }
}

/// Runs the report over `inputs`, telling `progress` the bytes read.
///
/// Two passes. The first goes over the lines, normalizing each at the three
/// RFC rungs. The protocol steps and the single transforms are functions of
/// the scheme rung's form, so the second goes over the scheme rung's classes,
/// one line each, in the order of their first lines: that gives the same
/// classes, sizes and examples as going over every line, for a fraction of
/// the work and none of the per-line memory.
pub fn run(
    inputs: &[Input],
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report, RunError> {
    let started = Instant::now();
    let steps = steps(options);
    let alone = Alone::new(options);
    let pool = thread_pool(options.threads)?;
    let reading = Reading {
        maps: inputs
            .iter()
            .map(|i| i.bytes().unwrap_or_default())
            .collect(),
        options,
        prints: InMemoryPrints::new(),
        lines: IndexLines::new(options.columns.clone(), options.index, inputs.len()),
    };

    let counts = pool.install(|| count_rungs(inputs, &reading, progress))?;
    let mut reports: Vec<StepReport> = Vec::with_capacity(steps.len());
    let below = |step: &Step| step.over.map(|o| &steps[o]);
    for (step, rung) in steps.iter().zip(RFC_RUNGS) {
        let (distinct, examples) = match counts.table(rung) {
            Some(table) => (
                table.len() as u64,
                examples(table, &reading, step, below(step), options.examples),
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
    let RungCounts {
        strings,
        tables: [syntax, scheme],
        rejected,
        rejected_by_reason,
        looked_at,
        skipped,
        captures,
        ..
    } = counts;
    // The second pass needs only the scheme rung's classes and their lines.
    drop((strings, syntax));
    let Classes {
        map: scheme,
        lines: scheme_lines,
    } = scheme;
    let scheme_rejected = rejected[rung_index(Rung::Scheme)];
    let scheme_classes = in_first_order(scheme);
    let protocol_steps = &steps[RFC_RUNGS.len()..];
    let worked: Vec<ProtocolPrints> = pool.install(|| {
        scheme_classes
            .par_chunks(CLASS_RUN)
            .map(|run| protocol_prints(run, &scheme_lines, &reading, protocol_steps, &alone))
            .collect()
    });
    let tables: Vec<Classes> = pool.install(|| {
        protocol_steps
            .par_iter()
            .enumerate()
            .map(|(p, step)| protocol_classes(&scheme_classes, &worked, p, step))
            .collect()
    });
    for (p, (step, table)) in protocol_steps.iter().zip(tables).enumerate() {
        // Protocol classes refer to the scheme rung's first lines.
        let examples = examples_in(
            &table,
            &scheme_lines,
            &reading,
            step,
            below(step),
            options.examples,
        );
        // A line a site rule breaks, or that the step's preset cannot
        // fetch, is rejected at that step.
        let rejected_by_step: u64 = worked.iter().map(|w| w.rejected[p]).sum();
        let report = step_report(
            step,
            table.len() as u64,
            scheme_rejected + rejected_by_step,
            worked.iter().map(|w| w.time[p]).sum(),
            examples,
            &reports,
        );
        reports.push(report);
    }
    let merges: Vec<(i64, Vec<AloneMerge>)> = pool.install(|| {
        (0..alone.len())
            .into_par_iter()
            .map(|t| {
                // Rules files are counted, not shown.
                let n = if t < alone.transforms.len() {
                    options.examples
                } else {
                    0
                };
                merged_alone(&scheme_classes, &worked, t, n)
            })
            .collect()
    });
    let (of_transforms, of_rules) = merges.split_at(alone.transforms.len());
    let mut attribution: Vec<TransformMerges> = alone
        .transforms
        .iter()
        .zip(&alone.singles)
        .zip(of_transforms)
        .map(
            |((&transform, single), (merges, examples))| TransformMerges {
                transform,
                merges: *merges,
                examples: examples
                    .iter()
                    .map(|m| {
                        let spellings = spellings(m.places, &scheme_lines, &reading);
                        merge(
                            m.size,
                            &spellings,
                            single,
                            vec![transform.name().to_string()],
                        )
                    })
                    .collect(),
                evidence: None,
            },
        )
        .collect();
    let rules_attribution = options
        .rules
        .iter()
        .flat_map(|r| &r.files)
        .map(|(name, _)| name.clone())
        .zip(of_rules.iter().map(|(merges, _)| *merges))
        .collect();
    let evidence = captures.map(|table| {
        let keys = UrlKeys::new(table, &scheme_classes, &worked);
        let judged: Vec<Judged> = (0..reports.len())
            .map(|s| match s.checked_sub(RFC_RUNGS.len()) {
                None => Judged::Rung(s),
                Some(p) => Judged::Protocol(p),
            })
            .chain((0..alone.transforms.len()).map(Judged::Alone))
            .collect();
        let mut judgements: Vec<Evidence> = pool.install(|| {
            judged
                .par_iter()
                .map(|&j| keys.evidence(j, &reading, options.examples))
                .collect()
        });
        for (row, evidence) in attribution
            .iter_mut()
            .zip(judgements.split_off(reports.len()))
        {
            row.evidence = Some(evidence);
        }
        for (report, evidence) in reports.iter_mut().zip(judgements) {
            report.evidence = Some(evidence);
        }
        keys.summary()
    });
    let (hosts, domains, top_hosts) = sites(worked, options.top_hosts);
    let mut rejected_by_reason: Vec<(&'static str, u64)> = rejected_by_reason.into_iter().collect();
    rejected_by_reason.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let Skipped {
        left_out,
        blank,
        header,
        binary,
    } = skipped;
    Ok(Report {
        lines_read: looked_at + left_out + blank + header + binary,
        lines: looked_at,
        left_out,
        blank,
        header,
        binary,
        sample: options.sample,
        steps: reports,
        rejected_by_reason,
        attribution,
        rules_attribution,
        hosts,
        domains,
        top_hosts,
        evidence,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A step the digests judge: an RFC rung, a protocol step (by its place
/// after the rungs), a transform alone.
#[derive(Clone, Copy)]
enum Judged {
    Rung(usize),
    Protocol(usize),
    Alone(usize),
}

/// Each captured URL's key at every judged step, from the first pass's
/// fingerprints and the second pass's images of its scheme class; and the
/// two levels the steps are judged from: the URLs (for the RFC rungs) and
/// the scheme rung's classes (for every step built on it).
struct UrlKeys<'w> {
    table: CaptureTable,
    contents: Contents,
    classes: &'w [SchemeClass],
    worked: &'w [ProtocolPrints],
    /// Each URL's scheme class, by its place in the order of first lines.
    class: Vec<u32>,
    urls: Level,
    scheme: Level,
    /// Each scheme class's unit of `scheme`, if it holds a captured URL.
    unit: Vec<u32>,
}

/// A scheme class that holds no captured URL.
const NO_UNIT: u32 = u32::MAX;

impl<'w> UrlKeys<'w> {
    fn new(
        mut table: CaptureTable,
        classes: &'w [SchemeClass],
        worked: &'w [ProtocolPrints],
    ) -> UrlKeys<'w> {
        let captures = std::mem::take(&mut table.captures);
        let (class, contents) = rayon::join(
            || {
                let index: HashMap<Print, u32, PrintHasher> = classes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.print, i as u32))
                    .collect();
                let class: Vec<u32> = table
                    .rungs
                    .iter()
                    .map(|[_, scheme]| index[scheme])
                    .collect();
                class
            },
            || captures.contents(),
        );
        let mut unit = vec![NO_UNIT; classes.len()];
        let mut own = Vec::new();
        let unit_of: Vec<u32> = class
            .iter()
            .map(|&c| {
                if unit[c as usize] == NO_UNIT {
                    unit[c as usize] = own.len() as u32;
                    own.push(classes[c as usize].print);
                }
                unit[c as usize]
            })
            .collect();
        let (urls, scheme) = rayon::join(
            || Level::of_urls(&contents),
            || Level::of_classes(&contents, &own, &unit_of),
        );
        UrlKeys {
            urls,
            scheme,
            table,
            contents,
            classes,
            worked,
            class,
            unit,
        }
    }

    fn key(&self, judged: Judged, url: UrlId) -> Print {
        let u = url as usize;
        let class = self.class[u] as usize;
        let (run, i) = (&self.worked[class / CLASS_RUN], class % CLASS_RUN);
        match judged {
            Judged::Rung(0) => self.contents.own(url),
            Judged::Rung(r) => self.table.rungs[u][r - 1],
            Judged::Protocol(p) => run.images[p][i],
            Judged::Alone(t) => {
                let changed = &run.alone[t];
                match changed.binary_search_by_key(&(i as u32), |&(c, _)| c) {
                    Ok(k) => changed[k].1,
                    Err(_) => self.table.rungs[u][1],
                }
            }
        }
    }

    /// The level step `judged` is judged from, and the units it changes
    /// there with their keys: URLs for the RFC rungs; for a protocol step
    /// or a transform alone, the scheme classes whose image differs.
    fn changed(&self, judged: Judged) -> (&Level, Vec<Keyed>) {
        // A scheme class's unit, if it holds a captured URL, with its image.
        let unit_with = |c: usize, key: Print| {
            let unit = self.unit[c];
            (unit != NO_UNIT).then_some(Keyed { key, unit })
        };
        let changed = match judged {
            Judged::Rung(0) => return (&self.urls, Vec::new()),
            Judged::Rung(r) => {
                let changed = (0..self.class.len() as UrlId)
                    .map(|u| Keyed {
                        key: self.table.rungs[u as usize][r - 1],
                        unit: u,
                    })
                    .filter(|k| k.key != self.contents.own(k.unit))
                    .collect();
                return (&self.urls, changed);
            }
            Judged::Protocol(p) => self
                .worked
                .iter()
                .enumerate()
                .flat_map(|(w, run)| {
                    run.images[p]
                        .iter()
                        .enumerate()
                        .map(move |(i, &image)| (w * CLASS_RUN + i, image))
                })
                .filter(|&(c, image)| image != self.classes[c].print)
                .filter_map(|(c, image)| unit_with(c, image))
                .collect(),
            Judged::Alone(t) => self
                .worked
                .iter()
                .enumerate()
                .flat_map(|(w, run)| {
                    run.alone[t]
                        .iter()
                        .map(move |&(i, print)| (w * CLASS_RUN + i as usize, print))
                })
                .filter_map(|(c, image)| unit_with(c, image))
                .collect(),
        };
        (&self.scheme, changed)
    }

    /// What the digests say of step `judged`, with `n` examples of each kind.
    fn evidence(&self, judged: Judged, reading: &Reading<'_, '_>, n: usize) -> Evidence {
        let (level, changed) = self.changed(judged);
        let counts = level.judge(&self.contents, changed, |u| self.key(judged, u), n);
        let captures = |urls: &[UrlId]| urls.iter().map(|&u| self.capture(u, reading)).collect();
        Evidence {
            false_examples: counts
                .false_examples
                .iter()
                .map(|m| FalseExample {
                    lines: m.lines,
                    contents: m.contents,
                    captures: captures(&m.urls),
                })
                .collect(),
            missed_examples: counts
                .missed_examples
                .iter()
                .map(|m| MissedExample {
                    keys: m.keys,
                    captures: captures(&m.urls),
                })
                .collect(),
            counts,
        }
    }

    /// URL `url` as an example shows it: its first capture.
    fn capture(&self, url: UrlId, reading: &Reading<'_, '_>) -> Capture {
        let place = self.table.first[url as usize];
        let lines = &self.table.lines;
        let (source, _) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        let digest = reading
            .digest(lines.line(place, &reading.maps), source)
            .unwrap_or_default();
        Capture {
            spelling: mask_password(&String::from_utf8_lossy(&reading.spelling(place, lines))),
            digest: String::from_utf8_lossy(&digest).into_owned(),
            digests: self.contents.digests(url),
        }
    }

    fn summary(&self) -> EvidenceSummary {
        EvidenceSummary {
            captures: self.contents.captures(),
            not_content: self.table.not_content,
            rejected: self.table.rejected,
            urls: self.contents.urls() as u64,
            contents: self.contents.len() as u64,
            changing: self.contents.changing() as u64,
        }
    }
}

/// The distinct hosts and registrable domains of the runs' classes, and
/// the `top` hosts by lines.
fn sites(worked: Vec<ProtocolPrints>, top: usize) -> (u64, u64, Vec<(String, u64)>) {
    let mut hosts = HostLines::default();
    for run in worked {
        for (host, lines) in run.hosts {
            *hosts.entry(host).or_default() += lines;
        }
    }
    let list = crate::domain::suffix_list();
    let domains: HashSet<&[u8], ahash::RandomState> = hosts
        .keys()
        .map(|host| list.registrable_domain(host).unwrap_or(host))
        .collect();
    let mut most: Vec<(&[u8], u64)> = hosts.iter().map(|(h, &n)| (&h[..], n)).collect();
    let by_lines = |a: &(&[u8], u64), b: &(&[u8], u64)| b.1.cmp(&a.1).then(a.0.cmp(b.0));
    if most.len() > top && top > 0 {
        most.select_nth_unstable_by(top - 1, by_lines);
    }
    most.truncate(top);
    most.sort_unstable_by(by_lines);
    let top_hosts = most
        .into_iter()
        .map(|(h, n)| (String::from_utf8_lossy(h).into_owned(), n))
        .collect();
    (hosts.len() as u64, domains.len() as u64, top_hosts)
}

/// The position of `rung` in [`RFC_RUNGS`].
fn rung_index(rung: Rung) -> usize {
    RFC_RUNGS
        .iter()
        .position(|&r| r == rung)
        .expect("one of the RFC rungs")
}

/// One line of the table, from its step's classes; `before` are the lines
/// of the steps before it.
fn step_report(
    step: &Step,
    distinct: u64,
    rejected: u64,
    time: Duration,
    examples: Vec<Merge>,
    before: &[StepReport],
) -> StepReport {
    let over = step.over.map(|o| &before[o]);
    StepReport {
        kind: step.kind,
        name: step.kind.name(),
        over: over.map(|r| r.name.clone()),
        distinct,
        collapsed: over.map_or(0, |r| r.distinct as i64 - distinct as i64),
        rejected,
        seconds: time.as_secs_f64(),
        examples,
        evidence: None,
    }
}

/// The first pass's totals: the string rung's keys, and a class table for
/// the syntax and the scheme rungs. Arrays are in the order of [`RFC_RUNGS`].
struct RungCounts {
    /// The string rung's keys, when there is no crawl index (whose
    /// [`Captures`] keep them).
    strings: HashSet<Print, PrintHasher>,
    tables: [Classes; 2],
    rejected: [u64; 3],
    rejected_by_reason: HashMap<&'static str, u64>,
    time: [Duration; 3],
    /// The lines looked at: not blank, not a header, and in the sample
    /// when it samples.
    looked_at: u64,
    skipped: Skipped,
    /// For a crawl index: its captures of content.
    captures: Option<CaptureTable>,
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
            for &reason in &chunk.rejected_by_reason {
                *self.rejected_by_reason.entry(reason).or_default() += 1;
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
fn count_rungs<'a>(
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

/// Whether a URI is in the sample: by a hash of its host without `www.`,
/// so every spelling of a site lands on the same side. A line with no host
/// (rejected, relative, `mailto:`) is sampled by a hash of itself: one
/// hash for all of them would take them all or none.
fn sampled(uri: &[u8], fraction: f64, prints: &InMemoryPrints) -> bool {
    let host = UriRef::parse_bytes(uri)
        .ok()
        .and_then(|u| u.host())
        .filter(|host| !host.is_empty())
        .map(str::to_ascii_lowercase);
    let hash = match &host {
        Some(host) => prints.short(host.strip_prefix("www.").unwrap_or(host).as_bytes()),
        None => prints.short(uri),
    };
    (hash as f64) < fraction * u64::MAX as f64
}

/// InMemoryPrints one chunk's lines at the three RFC rungs, rung by rung (so
/// each is timed once a chunk). Each line is parsed once: the string rung's
/// work is that check. An error names the input whose lines cannot be placed.
fn print_chunk<'a>(
    chunk: Chunk<'a>,
    rungs: &[Normalizer; 2],
    reading: &Reading<'_, '_>,
) -> Result<ChunkPrints<'a>, usize> {
    let t0 = Instant::now();
    let options = reading.options;
    // Every line of the chunk can be placed if its end can.
    Place::in_input(chunk.source, chunk.offset + chunk.bytes.len()).map_err(|_| chunk.source)?;
    let plain = reading.lines.is_plain();
    let (mut column_scratch, mut scratch) = (ColumnScratch::default(), Scratch::default());
    let mut lines = Vec::new();
    let mut digests = Vec::new();
    // The URIs: parsed from the lines as they are read when the lines are
    // the URIs; else prepared (a column, repaired, resolved) into one
    // buffer first, and parsed once it is complete.
    let mut parsed: Vec<Result<UriRef<'_>, &'static str>> = Vec::new();
    let mut prepared = Vec::new();
    let mut prepared_spans: Vec<Result<Range<usize>, &'static str>> = Vec::new();
    let mut skipped = Skipped::default();
    let rules = LineRules {
        header: options.header,
        max_line_bytes: options.max_line_bytes,
    };
    for (_, at, line) in chunk.lines(rules) {
        let line_bytes = at.of(&chunk.bytes);
        let from = prepared.len();
        // A line too long to read is not known to be content.
        let mut digest_print = 0;
        let span = match line {
            Line::Header => {
                skipped.header += 1;
                continue;
            }
            Line::Blank => {
                skipped.blank += 1;
                continue;
            }
            Line::Binary => {
                skipped.binary += 1;
                continue;
            }
            Line::TooLong => Err(ErrorKind::LineTooLong.reason()),
            Line::Text(line) if reading.lines.is_header(line) => {
                skipped.header += 1;
                continue;
            }
            Line::Text(_) if plain => Ok(0..0),
            Line::Text(line) => {
                // Read once: its URI prepared, its digest hashed (0 marks a
                // line that is no capture of content).
                let read = reading.lines.read(line, chunk.source);
                let digest = read.as_ref().ok().and_then(|r| r.digest.as_deref());
                digest_print = digest.map_or(0, |d| reading.prints.short(d) | 1);
                read.and_then(|read| {
                    reading
                        .lines
                        .with_uri_of(&read, &mut column_scratch, |uri| {
                            prepared.extend_from_slice(uri);
                            Ok(())
                        })
                })
                .map(|()| from..prepared.len())
                .map_err(|e| e.kind().reason())
            }
        };
        let line = line_bytes;
        if let Some(fraction) = options.sample {
            let uri = match &span {
                Ok(r) if !plain => &prepared[r.clone()],
                _ => line,
            };
            if !sampled(uri, fraction, &reading.prints) {
                prepared.truncate(from);
                skipped.left_out += 1;
                continue;
            }
        }
        lines.push(at.start..at.start + at.len);
        if options.index.is_some() {
            digests.push(digest_print);
        }
        if plain {
            parsed.push(span.and_then(|_| parse(line)));
        } else {
            prepared_spans.push(span);
        }
    }
    if !plain {
        parsed = prepared_spans
            .into_iter()
            .map(|span| span.and_then(|r| parse(&prepared[r])))
            .collect();
    }
    let mut rejected_by_reason: Vec<&'static str> =
        parsed.iter().filter_map(|uri| uri.err()).collect();
    let string_prints = parsed
        .iter()
        .map(|uri| {
            uri.as_ref()
                .map_or(0, |u| reading.prints.of(u.as_str().as_bytes()))
        })
        .collect();
    let mut time = [t0.elapsed(), Duration::ZERO, Duration::ZERO];
    let mut out = Vec::new();
    let [syntax, scheme] = std::array::from_fn(|r| {
        let t0 = Instant::now();
        let prints = parsed
            .iter()
            .map(|uri| {
                out.clear();
                let normalized = uri
                    .as_ref()
                    .map(|u| rungs[r].normalize_parsed(u, &mut out, &mut scratch));
                match normalized {
                    Ok(Ok(_)) => reading.prints.of(&out),
                    Ok(Err(e)) => {
                        // The scheme rung's rejects hold the syntax rung's.
                        if rungs[r].rung() == Rung::Scheme {
                            rejected_by_reason.push(e.kind().reason());
                        }
                        0
                    }
                    Err(_) => 0,
                }
            })
            .collect();
        time[r + 1] = t0.elapsed();
        prints
    });
    drop(parsed);
    Ok(ChunkPrints {
        chunk,
        lines,
        prints: [string_prints, syntax, scheme],
        digests,
        rejected_by_reason,
        skipped,
        time,
    })
}

/// Parses a URI, with the reason it is rejected.
fn parse(uri: &[u8]) -> Result<UriRef<'_>, &'static str> {
    UriRef::parse_bytes(uri).map_err(|e| e.kind().reason())
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

impl<'a> ChunkPrints<'a> {
    /// The `i`th line looked at: its place and bytes.
    fn line_at(&self, i: usize) -> LineAt<'_, 'a> {
        let span = self.lines[i].start as usize..self.lines[i].end as usize;
        LineAt {
            place: Place::in_input(self.chunk.source, self.chunk.offset + span.start)
                .expect("the chunk's end was placed"),
            in_chunk: Some((&self.chunk, &self.chunk.bytes[span])),
        }
    }
}

/// The captures of content the first pass met in a crawl index, with what
/// the report needs of each URL.
#[derive(Default)]
struct CaptureTable {
    captures: Captures,
    /// Each URL's fingerprints at the syntax and the scheme rungs.
    rungs: Vec<[Print; 2]>,
    /// Each URL's first line.
    first: Vec<Place>,
    lines: LineStore,
    /// Lines that are no capture of content (not 2xx, no digest).
    not_content: u64,
    /// Captures of content the scheme rung rejects: not judged.
    rejected: u64,
}

impl CaptureTable {
    /// Takes one chunk's lines, in input order: its captures, and the
    /// spellings of the rest (counting those the string rung rejects).
    fn count(&mut self, chunk: &ChunkPrints<'_>, string_rejected: &mut u64) {
        for (i, &digest) in chunk.digests.iter().enumerate() {
            let [string, syntax, scheme] = [0, 1, 2].map(|r| chunk.prints[r][i]);
            if digest == 0 {
                self.not_content += 1;
            } else if scheme == REJECTED {
                self.rejected += 1;
            }
            if digest == 0 || scheme == REJECTED {
                match string {
                    REJECTED => *string_rejected += 1,
                    string => self.captures.add_spelling(string),
                }
                continue;
            }
            if let (_, true) = self.captures.add(string, digest) {
                let line = chunk.line_at(i);
                self.rungs.push([syntax, scheme]);
                self.first.push(line.place);
                if let Some((chunk, bytes)) = line.in_chunk {
                    self.lines.keep(chunk, line.place, bytes);
                }
            }
        }
    }
}

/// The scheme rung's classes, earliest first line first (places order
/// lines by input, then offset).
fn in_first_order(table: HashMap<Print, Class, PrintHasher>) -> Vec<SchemeClass> {
    let mut classes: Vec<SchemeClass> = table
        .into_iter()
        .map(|(print, class)| SchemeClass {
            first: class.first,
            size: class.size,
            print,
        })
        .collect();
    classes.par_sort_unstable_by_key(|c| c.first);
    classes
}

/// Works a run of scheme classes through every protocol step and every
/// attributed transform alone, from each class's first line.
fn protocol_prints(
    run: &[SchemeClass],
    lines: &LineStore,
    reading: &Reading<'_, '_>,
    protocols: &[Step],
    alone: &Alone,
) -> ProtocolPrints {
    let scheme = Normalizer::new(Rung::Scheme);
    let prints = &reading.prints;
    let (mut column_scratch, mut scratch) = (ColumnScratch::default(), Scratch::default());
    let mut forms = Vec::new();
    let spans: Vec<Range<usize>> = run
        .iter()
        .map(|class| {
            let start = forms.len();
            reading
                .with_uri_at(class.first, lines, &mut column_scratch, |uri| {
                    scheme.normalize_into(uri, &mut forms, &mut scratch)
                })
                .expect("the first pass accepted this line at the scheme rung");
            start..forms.len()
        })
        .collect();
    let parsed: Vec<UriRef<'_>> = spans
        .iter()
        .map(|span| {
            UriRef::parse_bytes(&forms[span.clone()]).expect("canonical forms are valid references")
        })
        .collect();
    let mut out = Vec::new();
    // What `normalizer` makes of class `i`: its fingerprint, or the scheme
    // rung's own when it changes nothing (so no bytes are hashed twice);
    // `Err` when a site rule rejects it, or when it must be `fetchable` and
    // is not.
    let mut image = |normalizer: &Normalizer, fetchable: bool, i: usize| -> Result<Print, ()> {
        out.clear();
        normalizer
            .protocol_form(&parsed[i], &mut out, &mut scratch)
            .map_err(|_| ())?;
        if fetchable {
            SchemeHost::of_valid(&out).fetchable().map_err(|_| ())?;
        }
        Ok(match out != forms[spans[i].clone()] {
            true => prints.of(&out),
            false => run[i].print,
        })
    };
    let mut time = Vec::with_capacity(protocols.len());
    let mut rejected = vec![0; protocols.len()];
    let images = protocols
        .iter()
        .zip(&mut rejected)
        .map(|(step, rejected)| {
            let t0 = Instant::now();
            let images = (0..run.len())
                .map(|i| {
                    image(&step.normalizer, step.fetchable, i).unwrap_or_else(|()| {
                        *rejected += run[i].size;
                        REJECTED
                    })
                })
                .collect();
            time.push(t0.elapsed());
            images
        })
        .collect();
    // Each transform alone, where it may change the form at all; each rules
    // file alone (a class a rule would reject is left out of its count).
    let mut merged = vec![Vec::new(); alone.len()];
    let mut note = |i: usize, t: usize, print: Print| {
        if print != run[i].print {
            merged[t].push((i as u32, print));
        }
    };
    for (i, uri) in parsed.iter().enumerate() {
        for candidate in candidates(uri) {
            let Some(t) = alone.transforms.iter().position(|&t| t == candidate) else {
                continue;
            };
            if let Ok(print) = image(&alone.singles[t], false, i) {
                note(i, t, print);
            }
        }
        for (k, rules) in alone.rules_files.iter().enumerate() {
            if let Ok(print) = image(rules, false, i) {
                note(i, alone.transforms.len() + k, print);
            }
        }
    }
    let alone = merged;
    let mut hosts = HostLines::default();
    for (uri, class) in parsed.iter().zip(run) {
        let Some(host) = Site::Host.of(&SchemeHost::from(uri)) else {
            continue;
        };
        // Most classes' hosts are known: no key is made for them.
        match hosts.get_mut(host) {
            Some(lines) => *lines += class.size,
            None => _ = hosts.insert(host.into(), class.size),
        }
    }
    ProtocolPrints {
        images,
        rejected,
        alone,
        time,
        hosts,
    }
}

/// The classes of protocol step `p` (`step`): the scheme classes merged by
/// their images, in the order of their first lines. Their lines are the
/// scheme rung's (its [`LineStore`]).
fn protocol_classes(
    classes: &[SchemeClass],
    worked: &[ProtocolPrints],
    p: usize,
    step: &Step,
) -> Classes {
    // The protocol step it is compared with, or none for the scheme rung.
    let over = step.over.and_then(|o| o.checked_sub(RFC_RUNGS.len()));
    let mut table = Classes::default();
    for (run, prints) in classes.chunks(CLASS_RUN).zip(worked) {
        for (i, class) in run.iter().enumerate() {
            if prints.images[p][i] == REJECTED {
                continue;
            }
            let below = match over {
                None => class.print,
                Some(o) => prints.images[o][i],
            };
            let line = || LineAt {
                place: class.first,
                in_chunk: None,
            };
            table.absorb(prints.images[p][i], below, class.size, line);
        }
    }
    table
}

/// A merge of scheme classes that one transform (or rules file) makes alone.
struct AloneMerge {
    /// Lines in the merged classes.
    size: u64,
    /// The first lines of its two earliest classes.
    places: [Place; 2],
}

/// How many scheme classes transform `t` alone merges, and its `n` largest
/// merges (largest first, earliest first on a tie). The classes it changes
/// are grouped by the forms they become, each with the class it leaves
/// alone that already has that form, if any: each group of `k` is `k - 1`
/// classes fewer.
fn merged_alone(
    classes: &[SchemeClass],
    worked: &[ProtocolPrints],
    t: usize,
    n: usize,
) -> (i64, Vec<AloneMerge>) {
    struct Group {
        classes: u64,
        size: u64,
        places: [Place; 2],
    }
    let empty = || Group {
        classes: 0,
        size: 0,
        places: [NO_OTHER; 2],
    };
    let mut groups: HashMap<Print, Group, PrintHasher> = worked
        .iter()
        .flat_map(|w| w.alone[t].iter().map(|&(_, print)| (print, empty())))
        .collect();
    // In the classes' order, so that each group's places are its earliest.
    for (run, w) in classes.chunks(CLASS_RUN).zip(worked) {
        let mut changed = w.alone[t].iter().peekable();
        for (i, class) in run.iter().enumerate() {
            let image = match changed.next_if(|(c, _)| *c as usize == i) {
                Some(&(_, print)) => print,
                None => class.print,
            };
            if let Some(group) = groups.get_mut(&image) {
                if let Some(place) = group.places.get_mut(group.classes as usize) {
                    *place = class.first;
                }
                group.classes += 1;
                group.size += class.size;
            }
        }
    }
    let merged = groups.values().map(|g| g.classes as i64 - 1).sum();
    let mut largest: Vec<&Group> = groups.values().filter(|g| g.classes > 1).collect();
    let order = |g: &&Group| (std::cmp::Reverse(g.size), g.places[0]);
    if largest.len() > n {
        largest.select_nth_unstable_by_key(n, order);
        largest.truncate(n);
    }
    largest.sort_unstable_by_key(order);
    let largest = largest
        .into_iter()
        .map(|g| AloneMerge {
            size: g.size,
            places: g.places,
        })
        .collect();
    (merged, largest)
}

/// The `n` largest classes new at `step`, largest first, earliest first on a
/// tie; their lines are the table's own.
fn examples(
    table: &Classes,
    reading: &Reading<'_, '_>,
    step: &Step,
    below: Option<&Step>,
    n: usize,
) -> Vec<Merge> {
    examples_in(table, &table.lines, reading, step, below, n)
}

/// [`examples`], with the lines in `lines`.
fn examples_in(
    table: &Classes,
    lines: &LineStore,
    reading: &Reading<'_, '_>,
    step: &Step,
    below: Option<&Step>,
    n: usize,
) -> Vec<Merge> {
    let Some(below) = below else {
        return Vec::new();
    };
    let mut merged: Vec<(&Class, Place)> = table
        .map
        .values()
        .filter(|c| c.other != NO_OTHER)
        .map(|c| (c, c.other))
        .collect();
    // Classes have distinct first lines, so the order is total.
    let order = |(c, _): &(&Class, Place)| (std::cmp::Reverse(c.size), c.first);
    if merged.len() > n {
        merged.select_nth_unstable_by_key(n, order);
        merged.truncate(n);
    }
    merged.sort_unstable_by_key(order);
    merged
        .into_iter()
        .map(|(class, other)| {
            let spellings = spellings([class.first, other], lines, reading);
            let mut joined_by: Vec<String> = Vec::new();
            for spelling in &spellings {
                for reason in reasons(step, below, spelling) {
                    if !joined_by.contains(&reason) {
                        joined_by.push(reason);
                    }
                }
            }
            merge(class.size, &spellings, &step.normalizer, joined_by)
        })
        .collect()
}

/// The URIs of the lines at `places` as they entered the ladder (a column,
/// repaired, resolved).
fn spellings(places: [Place; 2], lines: &LineStore, reading: &Reading<'_, '_>) -> Vec<Vec<u8>> {
    places
        .into_iter()
        .map(|place| reading.spelling(place, lines))
        .collect()
}

/// A merge of `size` lines, its key `normalizer`'s form of the first
/// spelling; passwords masked.
fn merge(
    size: u64,
    spellings: &[Vec<u8>],
    normalizer: &Normalizer,
    joined_by: Vec<String>,
) -> Merge {
    let key = normalizer
        .normalize(&String::from_utf8_lossy(&spellings[0]))
        .unwrap_or_default();
    Merge {
        size,
        key: mask_password(&key),
        spellings: spellings
            .iter()
            .map(|s| mask_password(&String::from_utf8_lossy(s)))
            .collect(),
        joined_by,
    }
}

/// The names of what `step` changed in `uri` beyond `below`.
fn reasons(step: &Step, below: &Step, uri: &[u8]) -> Vec<String> {
    let (mut out, mut fired, mut scratch) = (Vec::new(), Vec::new(), Scratch::default());
    let Ok(changes) = step
        .normalizer
        .normalize_traced(uri, &mut out, &mut fired, &mut scratch)
    else {
        return Vec::new();
    };
    let below_changes = below
        .normalizer
        .normalize_into(uri, &mut Vec::new(), &mut scratch)
        .ok();
    let rung = step.normalizer.rung();
    let mut names: Vec<String> = changes
        .rules()
        .filter(|r| r.rung() == rung)
        .map(|r| r.description().to_string())
        .collect();
    names.extend(
        changes
            .transforms()
            .filter(|t| below_changes.is_none_or(|b| !b.transforms().any(|u| u == *t)))
            .map(|t| t.name().to_string()),
    );
    if let Some(rules) = step
        .normalizer
        .rules()
        .filter(|_| step.kind == StepKind::Rules)
    {
        names.extend(fired.iter().map(|&rule| rules.label(rule).to_string()));
    }
    names
}
