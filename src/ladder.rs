//! The ladder report: on the user's own lines, how many distinct keys each
//! rung and preset leaves, what each one merged (with real examples), and
//! how many merges each protocol transform adds on its own.
//!
//! Two passes: every line is normalized at the three RFC rungs, then every
//! class of the scheme rung (one line each) through the protocol steps and
//! each transform alone. Each step's keys are counted as 128-bit fingerprints — a collision
//! among 10^9 keys has a probability near 10^-21, so the counts are the
//! counts `dedup` gives. Lines are addressed by their place in the inputs
//! (standard input is read into memory first), so examples cost no copies.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::normalize::protocol::{PRESETS, Protocol, Transform, candidates};
use crate::normalize::{Normalizer, Rung};
use crate::pipeline::input::{Input, InputError, lines_at};
use crate::uri::{UriRef, mask_password};

/// One step of the report.
#[derive(Clone, Debug)]
pub struct Step {
    /// `string`, `syntax`, `scheme`, `protocol:safe`, …
    pub name: String,
    normalizer: Normalizer,
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
    pub threads: usize,
    /// Show a progress bar on standard error (when it is a terminal).
    pub progress: bool,
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
    pub name: String,
    pub distinct: u64,
    /// Distinct keys fewer than the step before (0 for the first).
    pub collapsed: i64,
    pub rejected: u64,
    /// Time spent on this step's own work, all threads together.
    pub seconds: f64,
    pub examples: Vec<Merge>,
}

/// The whole report.
#[derive(Clone, Debug)]
pub struct Report {
    /// Non-blank lines looked at.
    pub lines: u64,
    pub blank: u64,
    /// The sampled fraction, when the report is an estimate.
    pub sample: Option<f64>,
    pub steps: Vec<StepReport>,
    /// For each protocol transform: distinct keys fewer than the scheme rung
    /// with that transform alone.
    pub attribution: Vec<(Transform, i64)>,
    pub seconds: f64,
}

/// The steps for `options`: the three RFC rungs, the presets, and maybe one more.
pub fn steps(options: &Options) -> Vec<Step> {
    let mut steps: Vec<Step> = [Rung::String, Rung::Syntax, Rung::Scheme]
        .into_iter()
        .map(|rung| Step {
            name: rung.name().to_string(),
            normalizer: Normalizer::new(rung),
        })
        .collect();
    for preset in PRESETS {
        steps.push(Step {
            name: format!("protocol:{}", preset.name),
            normalizer: Normalizer::with_protocol(Protocol::from(*preset)),
        });
    }
    if let Some(t) = options.with {
        let mut protocol = Protocol::from(PRESETS[PRESETS.len() - 1]);
        protocol.add(t);
        steps.push(Step {
            name: format!("+{}", t.name()),
            normalizer: Normalizer::with_protocol(protocol),
        });
    }
    steps
}

/// The transforms whose merges are attributed: every one in a preset.
fn attributed() -> Vec<Transform> {
    Transform::ALL
        .into_iter()
        .filter(|t| PRESETS.iter().any(|p| p.transforms().any(|u| u == *t)))
        .collect()
}

/// A line's place: input number in the top 24 bits, offset below.
type Position = u64;
const OFFSET_BITS: u32 = 40;

/// A fingerprint; 0 means "rejected at this step".
type Print = u128;

/// A map keyed by fingerprints, which are already uniformly random.
type PrintHasher = BuildHasherDefault<FoldHasher>;
type Classes = HashMap<Print, Class, PrintHasher>;

#[derive(Default)]
struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
}

/// What a step remembers of one class.
#[derive(Clone, Copy)]
struct Class {
    size: u64,
    /// The step below's fingerprint of the class's first line (low bits).
    below: u64,
    first: Position,
    /// The first line whose fingerprint below differs from the first's, or
    /// [`NO_OTHER`] (kept as a plain number: classes are most of the memory).
    other: Position,
}

/// No line of the class differs below (yet).
const NO_OTHER: Position = Position::MAX;

/// Adds `size` lines to the class of `print`, the first of them at
/// `position` with fingerprint `below` at the step below. Called in input
/// order, so `first` and `other` are the earliest such lines.
fn absorb(table: &mut Classes, print: Print, below: Print, position: Position, size: u64) {
    let below = below as u64;
    table
        .entry(print)
        .and_modify(|c| {
            c.size += size;
            if c.other == NO_OTHER && c.below != below {
                c.other = position;
            }
        })
        .or_insert(Class {
            size,
            below,
            first: position,
            other: NO_OTHER,
        });
}

/// The per-line fingerprints of one chunk at the three RFC rungs.
struct ChunkPrints {
    positions: Vec<Position>,
    /// `prints[rung][line]`: string, syntax, scheme.
    prints: [Vec<Print>; 3],
    blank: u64,
    time: [Duration; 3],
}

/// One class of the scheme rung, which the protocol steps start from.
#[derive(Clone, Copy)]
struct SchemeClass {
    first: Position,
    size: u64,
    print: Print,
}

/// How many scheme classes the second pass works as one task.
const CLASS_RUN: usize = 4096;

/// What the protocol steps and transforms make of a run of scheme classes.
struct ProtocolPrints {
    /// `images[step][class]`: each protocol step's fingerprint.
    images: Vec<Vec<Print>>,
    /// `changed[class]`: the attributed transforms (by index) that change it.
    changed: Vec<u32>,
    /// `alone[transform]`: the fingerprints of the forms it changed.
    alone: Vec<Vec<Print>>,
    time: Vec<Duration>,
}

type Hashers = (ahash::RandomState, ahash::RandomState);

/// Runs the report over `inputs`.
///
/// Two passes. The first goes over the lines, normalizing each at the three
/// RFC rungs. The protocol steps and the single transforms are functions of
/// the scheme rung's form, so the second goes over the scheme rung's classes,
/// one line each, in the order of their first lines: that gives the same
/// classes, sizes and examples as going over every line, for a fraction of
/// the work and none of the per-line memory.
pub fn run(inputs: &[Input], options: &Options) -> Result<Report, InputError> {
    let started = Instant::now();
    let sources = load(inputs)?;
    let steps = steps(options);
    let transforms = attributed();
    let hashers = (
        ahash::RandomState::with_seeds(1, 2, 3, 4),
        ahash::RandomState::with_seeds(5, 6, 7, 8),
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| InputError::new("<threads>", std::io::Error::other(e)))?;
    let progress = crate::pipeline::Unwatched;

    let lines = pool.install(|| count_rungs(&sources, options, &hashers, &progress));
    let mut reports = Vec::with_capacity(steps.len());
    reports.push(step_report(
        &steps[0],
        lines.strings.len() as u64,
        lines.rejected[0],
        lines.time[0],
        Vec::new(),
        None,
    ));
    for (r, table) in lines.tables.iter().enumerate() {
        let s = r + 1;
        reports.push(step_report(
            &steps[s],
            table.len() as u64,
            lines.rejected[s],
            lines.time[s],
            examples(table, &sources, &steps[s], &steps[s - 1], options.examples),
            reports.last(),
        ));
    }
    drop(lines.strings);
    let [syntax, scheme] = lines.tables;
    drop(syntax);
    let scheme_classes = in_first_order(scheme);
    let protocol_steps: Vec<&Protocol> = steps[3..]
        .iter()
        .filter_map(|step| step.normalizer.protocol())
        .collect();
    let worked: Vec<ProtocolPrints> = pool.install(|| {
        scheme_classes
            .par_chunks(CLASS_RUN)
            .map(|run| protocol_prints(run, &sources, &protocol_steps, &transforms, &hashers))
            .collect()
    });
    let tables: Vec<Classes> = pool.install(|| {
        (0..protocol_steps.len())
            .into_par_iter()
            .map(|p| protocol_classes(&scheme_classes, &worked, p))
            .collect()
    });
    for (p, table) in tables.iter().enumerate() {
        let s = 3 + p;
        reports.push(step_report(
            &steps[s],
            table.len() as u64,
            lines.rejected[2],
            worked.iter().map(|w| w.time[p]).sum(),
            examples(table, &sources, &steps[s], &steps[s - 1], options.examples),
            reports.last(),
        ));
    }
    drop(tables);
    let attribution = pool.install(|| {
        (0..transforms.len())
            .into_par_iter()
            .map(|t| (transforms[t], merged_alone(&scheme_classes, &worked, t)))
            .collect()
    });
    Ok(Report {
        lines: lines.seen,
        blank: lines.blank,
        sample: options.sample,
        steps: reports,
        attribution,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// One line of the table, from its step's classes.
fn step_report(
    step: &Step,
    distinct: u64,
    rejected: u64,
    time: Duration,
    examples: Vec<Merge>,
    previous: Option<&StepReport>,
) -> StepReport {
    StepReport {
        name: step.name.clone(),
        distinct,
        collapsed: previous.map_or(0, |r| r.distinct as i64 - distinct as i64),
        rejected,
        seconds: time.as_secs_f64(),
        examples,
    }
}

/// The first pass's totals: the string rung's keys, and a class table for
/// the syntax and the scheme rungs.
struct RungCounts {
    strings: HashSet<Print, PrintHasher>,
    tables: [Classes; 2],
    rejected: [u64; 3],
    time: [Duration; 3],
    seen: u64,
    blank: u64,
}

impl RungCounts {
    /// Counts a batch of chunks, in input order, each rung on its own task.
    fn count(&mut self, printed: &[ChunkPrints]) {
        for chunk in printed {
            self.seen += chunk.positions.len() as u64;
            self.blank += chunk.blank;
            for (t, d) in self.time.iter_mut().zip(chunk.time) {
                *t += d;
            }
        }
        let [string_rejected, rejected @ ..] = &mut self.rejected;
        let strings = &mut self.strings;
        rayon::join(
            || {
                for &p in printed.iter().flat_map(|chunk| &chunk.prints[0]) {
                    match p {
                        0 => *string_rejected += 1,
                        p => _ = strings.insert(p),
                    }
                }
            },
            || {
                self.tables
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
}

/// The first pass: batches of chunks are fingerprinted in parallel, and each
/// batch is counted while the next one is fingerprinted.
fn count_rungs(
    sources: &[Cow<'_, [u8]>],
    options: &Options,
    hashers: &Hashers,
    progress: &dyn crate::pipeline::Progress,
) -> RungCounts {
    let rungs = [Rung::Syntax, Rung::Scheme].map(Normalizer::new);
    let mut counts = RungCounts {
        strings: HashSet::default(),
        tables: Default::default(),
        rejected: [0; 3],
        time: [Duration::ZERO; 3],
        seen: 0,
        blank: 0,
    };
    let ranges = chunk_ranges(sources);
    let print_batch = |batch: &[(usize, usize, usize)]| -> Vec<ChunkPrints> {
        let printed = batch
            .par_iter()
            .map(|&(source, start, end)| {
                print_chunk(sources, source, start, end, &rungs, options, hashers)
            })
            .collect();
        progress.advance(
            batch
                .iter()
                .map(|&(_, start, end)| (end - start) as u64)
                .sum(),
        );
        printed
    };
    let mut pending: Vec<ChunkPrints> = Vec::new();
    for batch in ranges.chunks(rayon::current_num_threads() * 4) {
        let (printed, ()) = rayon::join(|| print_batch(batch), || counts.count(&pending));
        pending = printed;
    }
    counts.count(&pending);
    counts
}

/// Each input's bytes: the map of a file, or standard input read whole.
fn load(inputs: &[Input]) -> Result<Vec<Cow<'_, [u8]>>, InputError> {
    inputs
        .iter()
        .map(|input| match input.bytes() {
            Some(bytes) => Ok(Cow::Borrowed(bytes)),
            None => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map_err(|e| InputError::new(input.name(), e))?;
                Ok(Cow::Owned(bytes))
            }
        })
        .collect()
}

/// Ranges of about 1 MiB ending at newlines: `(source, start, end)`.
fn chunk_ranges(sources: &[Cow<'_, [u8]>]) -> Vec<(usize, usize, usize)> {
    let mut ranges = Vec::new();
    for (source, bytes) in sources.iter().enumerate() {
        let mut start = 0;
        while start < bytes.len() {
            let want = (start + crate::pipeline::chunks::CHUNK_BYTES).min(bytes.len());
            let end = memchr::memchr(b'\n', &bytes[want - 1..]).map_or(bytes.len(), |n| want + n);
            ranges.push((source, start, end));
            start = end;
        }
    }
    ranges
}

/// The fingerprint of a key (never 0, which means "rejected").
fn print(key: &[u8], hashers: &Hashers) -> Print {
    let p = u128::from(hashers.0.hash_one(key)) << 64 | u128::from(hashers.1.hash_one(key));
    p.max(1)
}

/// Whether a line is in the sample: by a hash of its host without `www.`,
/// so every spelling of a site lands on the same side.
fn sampled(line: &[u8], fraction: f64, hashers: &Hashers) -> bool {
    let host = UriRef::parse_bytes(line)
        .ok()
        .and_then(|u| u.host())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    (hashers.0.hash_one(host.as_bytes()) as f64) < fraction * u64::MAX as f64
}

/// Fingerprints one chunk's lines at the three RFC rungs, rung by rung (so
/// each is timed once a chunk). Each line is parsed once: the string rung's
/// work is that check.
fn print_chunk(
    sources: &[Cow<'_, [u8]>],
    source: usize,
    start: usize,
    end: usize,
    rungs: &[Normalizer; 2],
    options: &Options,
    hashers: &Hashers,
) -> ChunkPrints {
    let t0 = Instant::now();
    let mut positions = Vec::new();
    let mut blank = 0;
    let mut parsed: Vec<Option<UriRef<'_>>> = Vec::new();
    let body_offset = |line: &[u8]| line.as_ptr() as usize - sources[source].as_ptr() as usize;
    for (_, line) in lines_at(&sources[source][start..end], start) {
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if options.sample.is_some_and(|f| !sampled(line, f, hashers)) {
            continue;
        }
        positions.push((source as u64) << OFFSET_BITS | body_offset(line) as u64);
        parsed.push(UriRef::parse_bytes(line).ok());
    }
    let string_prints = parsed
        .iter()
        .map(|uri| {
            uri.as_ref()
                .map_or(0, |u| print(u.as_str().as_bytes(), hashers))
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
                match uri.as_ref().map(|u| rungs[r].normalize_parsed(u, &mut out)) {
                    Some(Ok(_)) => print(&out, hashers),
                    _ => 0,
                }
            })
            .collect();
        time[r + 1] = t0.elapsed();
        prints
    });
    ChunkPrints {
        positions,
        prints: [string_prints, syntax, scheme],
        blank,
        time,
    }
}

/// Counts one chunk's lines into rung `r`'s table, in input order.
fn count_rung(table: &mut Classes, rejected: &mut u64, chunk: &ChunkPrints, r: usize) {
    for (i, &p) in chunk.prints[r].iter().enumerate() {
        if p == 0 {
            *rejected += 1;
            continue;
        }
        let below = r.checked_sub(1).map_or(0, |b| chunk.prints[b][i]);
        absorb(table, p, below, chunk.positions[i], 1);
    }
}

/// The scheme rung's classes, earliest first line first.
fn in_first_order(table: Classes) -> Vec<SchemeClass> {
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
    sources: &[Cow<'_, [u8]>],
    protocol_steps: &[&Protocol],
    transforms: &[Transform],
    hashers: &Hashers,
) -> ProtocolPrints {
    let scheme = Normalizer::new(Rung::Scheme);
    let mut forms = Vec::new();
    let spans: Vec<std::ops::Range<usize>> = run
        .iter()
        .map(|class| {
            let start = forms.len();
            scheme
                .normalize_into(line_at(sources, class.first), &mut forms)
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
    // The fingerprint of what `protocol` makes of class `i`: the scheme
    // rung's own when it changes nothing, so no bytes are hashed twice.
    let mut image = |protocol: &Protocol, i: usize| -> Option<Print> {
        out.clear();
        protocol.write(&parsed[i], &mut out);
        (out != forms[spans[i].clone()]).then(|| print(&out, hashers))
    };
    let mut time = Vec::with_capacity(protocol_steps.len());
    let images = protocol_steps
        .iter()
        .map(|protocol| {
            let t0 = Instant::now();
            let images = (0..run.len())
                .map(|i| image(protocol, i).unwrap_or(run[i].print))
                .collect();
            time.push(t0.elapsed());
            images
        })
        .collect();
    // Each transform alone, where it may change the form at all.
    let singles: Vec<Protocol> = transforms
        .iter()
        .map(|&t| {
            let mut single = Protocol::none();
            single.add(t);
            single
        })
        .collect();
    let mut changed = vec![0u32; run.len()];
    let mut alone = vec![Vec::new(); transforms.len()];
    for (i, uri) in parsed.iter().enumerate() {
        for candidate in candidates(uri) {
            let Some(t) = transforms.iter().position(|&t| t == candidate) else {
                continue;
            };
            if let Some(print) = image(&singles[t], i) {
                changed[i] |= 1 << t;
                alone[t].push(print);
            }
        }
    }
    ProtocolPrints {
        images,
        changed,
        alone,
        time,
    }
}

/// The classes of protocol step `p`: the scheme classes merged by their
/// images, in the order of their first lines.
fn protocol_classes(classes: &[SchemeClass], worked: &[ProtocolPrints], p: usize) -> Classes {
    let mut table = Classes::default();
    for (run, prints) in classes.chunks(CLASS_RUN).zip(worked) {
        for (i, class) in run.iter().enumerate() {
            let below = match p {
                0 => class.print,
                _ => prints.images[p - 1][i],
            };
            absorb(
                &mut table,
                prints.images[p][i],
                below,
                class.first,
                class.size,
            );
        }
    }
    table
}

/// How many scheme classes transform `t` alone merges: the classes it
/// changes, less the distinct forms they become that are not already the
/// form of a class it leaves alone.
fn merged_alone(classes: &[SchemeClass], worked: &[ProtocolPrints], t: usize) -> i64 {
    let images: HashSet<Print, PrintHasher> = worked
        .iter()
        .flat_map(|w| w.alone[t].iter().copied())
        .collect();
    let changed = worked.iter().map(|w| w.alone[t].len()).sum::<usize>();
    let unchanged_hit = classes
        .chunks(CLASS_RUN)
        .zip(worked)
        .flat_map(|(run, w)| run.iter().zip(&w.changed))
        .filter(|(class, mask)| *mask & (1 << t) == 0 && images.contains(&class.print))
        .count();
    changed as i64 - (images.len() - unchanged_hit) as i64
}

/// The `n` largest classes new at `step`, largest first, earliest first on a tie.
fn examples(
    table: &Classes,
    sources: &[Cow<'_, [u8]>],
    step: &Step,
    below: &Step,
    n: usize,
) -> Vec<Merge> {
    let mut merged: Vec<&Class> = table.values().filter(|c| c.other != NO_OTHER).collect();
    // Classes have distinct first lines, so the order is total.
    let order = |c: &&Class| (std::cmp::Reverse(c.size), c.first);
    if merged.len() > n {
        merged.select_nth_unstable_by_key(n, order);
        merged.truncate(n);
    }
    merged.sort_unstable_by_key(order);
    merged
        .into_iter()
        .map(|class| {
            let spellings: Vec<&[u8]> = [class.first, class.other]
                .into_iter()
                .map(|p| line_at(sources, p))
                .collect();
            let key = step
                .normalizer
                .normalize(&String::from_utf8_lossy(spellings[0]))
                .unwrap_or_default();
            let mut joined_by: Vec<String> = Vec::new();
            for spelling in &spellings {
                for reason in reasons(step, below, spelling) {
                    if !joined_by.contains(&reason) {
                        joined_by.push(reason);
                    }
                }
            }
            Merge {
                size: class.size,
                key: mask_password(&key),
                spellings: spellings
                    .iter()
                    .map(|s| mask_password(&String::from_utf8_lossy(s)))
                    .collect(),
                joined_by,
            }
        })
        .collect()
}

/// The names of what `step` changed in `line` beyond `below`.
fn reasons(step: &Step, below: &Step, line: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(changes) = step.normalizer.normalize_into(line, &mut out) else {
        return Vec::new();
    };
    let below_changes = below.normalizer.normalize_into(line, &mut Vec::new()).ok();
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
    names
}

/// The line at `position`.
fn line_at<'s>(sources: &'s [Cow<'_, [u8]>], position: Position) -> &'s [u8] {
    let source = (position >> OFFSET_BITS) as usize;
    let offset = (position & ((1 << OFFSET_BITS) - 1)) as usize;
    let rest = &sources[source][offset..];
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    line.strip_suffix(b"\r").unwrap_or(line)
}
