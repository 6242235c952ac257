//! The ladder report: on the user's own lines, how many distinct keys each
//! rung and preset leaves, what each one merged (with real examples), and
//! how many merges each protocol transform adds on its own.
//!
//! One pass: every line is normalized at every step, each step building on
//! the previous one's output (the protocol steps reuse the scheme rung's form),
//! and each step's keys are counted as 128-bit fingerprints — a collision
//! among 10^9 keys has a probability near 10^-21, so the counts are the
//! counts `dedup` gives. Lines are addressed by their place in the inputs
//! (standard input is read into memory first), so examples cost no copies.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::Read;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::normalize::protocol::{PRESETS, Protocol, Transform};
use crate::normalize::{Normalizer, Rung};
use crate::pipeline::input::{Input, InputError, lines};
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

/// A set keyed by fingerprints, which are already uniformly random.
type PrintHasher = BuildHasherDefault<FoldHasher>;

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
    /// A line whose fingerprint below differs from the first's.
    other: Option<Position>,
}

/// The per-line fingerprints of one chunk, step-major.
struct ChunkPrints {
    positions: Vec<Position>,
    /// `prints[step][line]`.
    prints: Vec<Vec<Print>>,
    /// `attribution[transform][line]`.
    attribution: Vec<Vec<Print>>,
    blank: u64,
    time: Vec<Duration>,
}

/// Runs the report over `inputs`.
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

    let chunks = chunk_ranges(&sources);
    let progress = crate::pipeline::progress_bar(inputs, options.progress);
    let mut classes: Vec<HashMap<Print, Class, PrintHasher>> =
        steps.iter().map(|_| HashMap::default()).collect();
    let mut alone: Vec<HashSet<Print, PrintHasher>> =
        transforms.iter().map(|_| HashSet::default()).collect();
    let mut rejected = vec![0u64; steps.len()];
    let mut time = vec![Duration::ZERO; steps.len()];
    let (mut lines_seen, mut blank) = (0u64, 0u64);

    // Batches of chunks: printed in parallel, then counted in input order,
    // each step's table on its own thread.
    for batch in chunks.chunks(options.threads.max(1) * 4) {
        let printed: Vec<ChunkPrints> = pool.install(|| {
            batch
                .par_iter()
                .map(|&(source, start, end)| {
                    print_chunk(
                        &sources,
                        source,
                        start,
                        end,
                        &steps,
                        &transforms,
                        options,
                        &hashers,
                    )
                })
                .collect()
        });
        progress.inc(
            batch
                .iter()
                .map(|&(_, start, end)| (end - start) as u64)
                .sum(),
        );
        for chunk in &printed {
            lines_seen += chunk.positions.len() as u64;
            blank += chunk.blank;
            for (t, d) in time.iter_mut().zip(&chunk.time) {
                *t += *d;
            }
        }
        pool.install(|| {
            rayon::join(
                || {
                    classes
                        .par_iter_mut()
                        .zip(rejected.par_iter_mut())
                        .enumerate()
                        .for_each(|(s, (table, rejected))| {
                            for chunk in &printed {
                                count_step(table, rejected, chunk, s);
                            }
                        })
                },
                || {
                    alone.par_iter_mut().enumerate().for_each(|(t, set)| {
                        for chunk in &printed {
                            set.extend(chunk.attribution[t].iter().copied().filter(|&p| p != 0));
                        }
                    })
                },
            )
        });
    }

    progress.finish_and_clear();
    let mut reports: Vec<StepReport> = Vec::with_capacity(steps.len());
    for (s, step) in steps.iter().enumerate() {
        let distinct = classes[s].len() as u64;
        let collapsed = reports
            .last()
            .map_or(0, |r: &StepReport| r.distinct as i64 - distinct as i64);
        let examples = if s == 0 {
            Vec::new()
        } else {
            examples(&classes[s], &sources, step, &steps[s - 1], options.examples)
        };
        reports.push(StepReport {
            name: step.name.clone(),
            distinct,
            collapsed,
            rejected: rejected[s],
            seconds: time[s].as_secs_f64(),
            examples,
        });
    }
    let scheme_distinct = reports[2].distinct as i64;
    let attribution = transforms
        .iter()
        .zip(&alone)
        .map(|(&t, set)| (t, scheme_distinct - set.len() as i64))
        .collect();
    Ok(Report {
        lines: lines_seen,
        blank,
        sample: options.sample,
        steps: reports,
        attribution,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Each input's bytes: the map of a file, or standard input read whole.
fn load(inputs: &[Input]) -> Result<Vec<std::borrow::Cow<'_, [u8]>>, InputError> {
    inputs
        .iter()
        .map(|input| match input.bytes() {
            Some(bytes) => Ok(std::borrow::Cow::Borrowed(bytes)),
            None => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .lock()
                    .read_to_end(&mut bytes)
                    .map_err(|e| InputError::new(input.name(), e))?;
                Ok(std::borrow::Cow::Owned(bytes))
            }
        })
        .collect()
}

/// Ranges of about 1 MiB ending at newlines: `(source, start, end)`.
fn chunk_ranges(sources: &[std::borrow::Cow<'_, [u8]>]) -> Vec<(usize, usize, usize)> {
    let mut ranges = Vec::new();
    for (source, bytes) in sources.iter().enumerate() {
        let mut start = 0;
        while start < bytes.len() {
            let want = (start + crate::pipeline::reader::CHUNK_BYTES).min(bytes.len());
            let end = memchr::memchr(b'\n', &bytes[want - 1..]).map_or(bytes.len(), |n| want + n);
            ranges.push((source, start, end));
            start = end;
        }
    }
    ranges
}

/// The fingerprint of a key (never 0, which means "rejected").
fn print(key: &[u8], hashers: &(ahash::RandomState, ahash::RandomState)) -> Print {
    let p = u128::from(hashers.0.hash_one(key)) << 64 | u128::from(hashers.1.hash_one(key));
    p.max(1)
}

/// Whether a line is in the sample: by a hash of its host without `www.`,
/// so every spelling of a site lands on the same side.
fn sampled(line: &[u8], fraction: f64, hashers: &(ahash::RandomState, ahash::RandomState)) -> bool {
    let host = UriRef::parse_bytes(line)
        .ok()
        .and_then(|u| u.host())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host);
    (hashers.0.hash_one(host.as_bytes()) as f64) < fraction * u64::MAX as f64
}

#[allow(clippy::too_many_arguments)]
fn print_chunk(
    sources: &[std::borrow::Cow<'_, [u8]>],
    source: usize,
    start: usize,
    end: usize,
    steps: &[Step],
    transforms: &[Transform],
    options: &Options,
    hashers: &(ahash::RandomState, ahash::RandomState),
) -> ChunkPrints {
    let bytes = &sources[source][start..end];
    let mut positions = Vec::new();
    let mut blank = 0;
    let mut kept: Vec<&[u8]> = Vec::new();
    let body_offset = |line: &[u8]| line.as_ptr() as usize - sources[source].as_ptr() as usize;
    // `lines` skips a BOM only at the start of an input: chunk 0.
    for (_, line) in lines(if start == 0 {
        &sources[source][..end]
    } else {
        bytes
    }) {
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if options.sample.is_some_and(|f| !sampled(line, f, hashers)) {
            continue;
        }
        positions.push((source as u64) << OFFSET_BITS | body_offset(line) as u64);
        kept.push(line);
    }
    let mut time = vec![Duration::ZERO; steps.len()];
    let mut prints: Vec<Vec<Print>> = Vec::with_capacity(steps.len());
    let mut out = Vec::new();
    // The three RFC rungs, step by step (so each is timed once a chunk);
    // the scheme rung's forms are kept for the protocol steps.
    let mut scheme_forms: Vec<u8> = Vec::new();
    let mut scheme_spans: Vec<Option<(usize, usize)>> = Vec::with_capacity(kept.len());
    for (s, step) in steps.iter().enumerate().take(3) {
        let t0 = Instant::now();
        let step_prints = kept
            .iter()
            .map(|line| {
                out.clear();
                let accepted = step.normalizer.normalize_into(line, &mut out).is_ok();
                if s == 2 {
                    let start = scheme_forms.len();
                    scheme_forms.extend_from_slice(&out);
                    scheme_spans.push(accepted.then_some((start, scheme_forms.len())));
                }
                if accepted { print(&out, hashers) } else { 0 }
            })
            .collect();
        prints.push(step_prints);
        time[s] += t0.elapsed();
    }
    // Parsed once, shared by every protocol step and every single transform.
    let parsed: Vec<Option<UriRef<'_>>> = scheme_spans
        .iter()
        .map(|span| span.and_then(|(a, b)| UriRef::parse_bytes(&scheme_forms[a..b]).ok()))
        .collect();
    let scheme_prints = prints[2].clone();
    // A protocol's print: the scheme rung's when no transform changed the
    // key (the bytes are then the same), else the new key's.
    let mut protocol_prints = |protocol: &Protocol| -> Vec<Print> {
        parsed
            .iter()
            .zip(&scheme_prints)
            .map(|(uri, &scheme_print)| match uri {
                Some(uri) => {
                    out.clear();
                    if protocol.write(uri, &mut out) == 0 {
                        scheme_print
                    } else {
                        print(&out, hashers)
                    }
                }
                None => 0,
            })
            .collect()
    };
    for (s, step) in steps.iter().enumerate().skip(3) {
        let t0 = Instant::now();
        let step_prints = step
            .normalizer
            .protocol()
            .map_or_else(|| vec![0; kept.len()], &mut protocol_prints);
        prints.push(step_prints);
        time[s] += t0.elapsed();
    }
    let attribution = transforms
        .iter()
        .map(|&t| {
            let mut single = Protocol::none();
            single.add(t);
            protocol_prints(&single)
        })
        .collect();
    ChunkPrints {
        positions,
        prints,
        attribution,
        blank,
        time,
    }
}

/// Counts one chunk's lines into step `s`'s table, in input order.
fn count_step(
    table: &mut HashMap<Print, Class, PrintHasher>,
    rejected: &mut u64,
    chunk: &ChunkPrints,
    s: usize,
) {
    for (i, &p) in chunk.prints[s].iter().enumerate() {
        if p == 0 {
            *rejected += 1;
            continue;
        }
        let below = if s == 0 {
            0
        } else {
            chunk.prints[s - 1][i] as u64
        };
        let position = chunk.positions[i];
        table
            .entry(p)
            .and_modify(|c| {
                c.size += 1;
                if c.other.is_none() && c.below != below {
                    c.other = Some(position);
                }
            })
            .or_insert(Class {
                size: 1,
                below,
                first: position,
                other: None,
            });
    }
}

/// The `n` largest classes new at `step`, largest first, earliest first on a tie.
fn examples(
    table: &HashMap<Print, Class, PrintHasher>,
    sources: &[std::borrow::Cow<'_, [u8]>],
    step: &Step,
    below: &Step,
    n: usize,
) -> Vec<Merge> {
    let mut merged: Vec<&Class> = table.values().filter(|c| c.other.is_some()).collect();
    merged.sort_by_key(|c| (std::cmp::Reverse(c.size), c.first));
    merged
        .into_iter()
        .take(n)
        .map(|class| {
            let spellings: Vec<&[u8]> = [Some(class.first), class.other]
                .into_iter()
                .flatten()
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
fn line_at<'s>(sources: &'s [std::borrow::Cow<'_, [u8]>], position: Position) -> &'s [u8] {
    let source = (position >> OFFSET_BITS) as usize;
    let offset = (position & ((1 << OFFSET_BITS) - 1)) as usize;
    let rest = &sources[source][offset..];
    let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
    line.strip_suffix(b"\r").unwrap_or(line)
}
