//! `pipeline`: the whole engine on arbitrary bytes read as lines. The bytes
//! are written to a temporary file (in /dev/shm when there is one), opened
//! with `Input::open` (memory-mapped) and run through `pipeline::run_on` (on
//! one thread pool kept for the whole campaign) with a `LineMapper` over the
//! scheme rung's `Normalizer` (`map_line` = `normalize_if_changed`),
//! `Invalid::Reject`, into a `Vec<u8>`, rejects into a counting
//! `RejectSink`. For `Mode::Dedup(Emit::Canonical)` and `Mode::Map` on every
//! input, and one of `Mode::Dedup(Emit::First)`, `Mode::Dedup(Emit::Count)`
//! or `Mode::Map` with a 48-byte line limit (by input length mod 3); one
//! dedup run of each input twice, in memory and with a 1-byte memory limit
//! (every line spilled to partition files), which must give the same bytes
//! and counts; every other input's dedup runs with a per-site cap of 1 to
//! 3 (a line's site is its key's first byte, so sites repeat), and every
//! other input's (by another bit of its length) runs sorted, in memory and
//! spilled. An input that begins with a compressed format's magic number is
//! decompressed by the model with the same crates: when they decode it, the
//! engine's output must be the model's of the decoded lines; when they do
//! not, the run must fail with an input error (never panic, never pass
//! damaged data as complete); an xz or lz4 input must be refused at open:
//! - `stats.balances()`: lines = unique + duplicates + capped + rejected + blank;
//! - the output has exactly `stats.unique` lines;
//! - the sink saw `stats.rejected_total()` lines, with increasing line numbers;
//! - Dedup: the output lines are pairwise distinct (for `first`, their
//!   canonical forms are); Map: every output line is the normalization of
//!   an input line;
//! - an input that looks binary (`pipeline::looks_binary`, the engine's
//!   own judgment, unit-tested beside it) contributes no output line, each
//!   of its lines counted as binary; the runs above read every input as
//!   text (`binary_as_text`), so the model's line rules apply to all;
//! - and the whole output equals a model computed line by line here
//!   (LF/CRLF, leading BOM, last line without newline, blank lines skipped,
//!   lines longer than the limit rejected, first occurrence wins, past a
//!   site's cap counted as capped, sorted by key when sorting), with the
//!   same counts.
#![no_main]

use std::collections::{HashMap, HashSet};
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use urinorm::pipeline::Rejection;
use urinorm::scratch::Slot;
use urinorm::normalize::{Normalizer, Rung, Scratch};
use urinorm::pipeline::input::{Input, MmapChoice};
use urinorm::pipeline::output::RejectSink;
use urinorm::pipeline::{
    self, Emit, Invalid, LineMapper, Mapped, MAX_LINE_BYTES, Mode, Options, Sinks, Unwatched,
};

/// The scheme rung; with `sites`, each line's site is its key's first byte.
struct Lines {
    normalizer: Normalizer,
    sites: bool,
}

impl LineMapper for Lines {
    fn map_line(
        &self,
        line: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Slot,
    ) -> Result<Option<Mapped>, Rejection> {
        let start = out.len();
        let scratch: &mut Scratch = scratch.get();
        let mut mapped = match self.normalizer.normalize_if_changed(line, out, scratch)? {
            true => Mapped::key(start..out.len()),
            false => Mapped::unchanged(),
        };
        if self.sites {
            let first = if out.len() > start { out[start] } else { line[0] };
            out.push(first);
            mapped.site = Some(out.len() - 1..out.len());
        }
        Ok(Some(mapped))
    }
}

/// The site the fuzzed mapper gives a key.
fn site(key: &[u8]) -> u8 {
    key[0]
}

#[derive(Default)]
struct Count {
    n: u64,
    last_line: u64,
    finished: u32,
}

impl RejectSink for Count {
    fn reject(
        &mut self,
        _input: &str,
        line: u64,
        _error: &Rejection,
        raw: &[u8],
    ) -> io::Result<()> {
        assert!(line > self.last_line, "reject line numbers not increasing");
        assert!(!raw.contains(&b'\n'));
        self.last_line = line;
        self.n += 1;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.finished += 1;
        Ok(())
    }
}

/// The model: each line of the input, `None` when blank, else the
/// normalizer's result (or an error for a line longer than `max`).
type Model = Vec<(Vec<u8>, Option<Result<Vec<u8>, ()>>)>;

fn model(data: &[u8], n: &Normalizer, max: usize) -> Model {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    let mut pieces: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|p| {
            let line = p.strip_suffix(b"\r").unwrap_or(p);
            let key = (!line.is_empty()).then(|| {
                let mut out = Vec::new();
                if line.len() > max {
                    return Err(());
                }
                n.normalize_into(line, &mut out, &mut Scratch::default())
                    .map(|_| out)
                    .map_err(|_| ())
            });
            (line.to_vec(), key)
        })
        .collect()
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// One pool for the campaign: building one per input would be most of the time.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap())
}

/// Where temporary files go: memory, when the machine has a tmpfs there.
fn temp_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}

fuzz_target!(|data: &[u8]| {
    let normalizer = Normalizer::new(Rung::Scheme);
    // Every other input (by length) is capped per site.
    let cap = (data.len() / 6 % 2 == 1).then_some(1 + data.len() as u64 % 3);
    let mapper = Lines {
        normalizer: normalizer.clone(),
        sites: cap.is_some(),
    };
    let path = temp_dir().join(format!(
        "urinorm-fuzz-pipeline-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, data).unwrap();
    // SAFETY: the file is this run's own, and nothing else writes it.
    let mmap = unsafe { MmapChoice::auto() };
    let opened = Input::open(path.to_str().unwrap(), mmap);
    let decoded = match decompressed(data) {
        Packed::Refused => {
            assert!(opened.is_err(), "an xz or lz4 input was opened");
            let _ = std::fs::remove_file(&path);
            return;
        }
        Packed::Plain => data.to_vec(),
        Packed::Decoded(Some(decoded)) => decoded,
        Packed::Decoded(None) => {
            // Damaged: the run fails with an input error.
            let inputs = [opened.expect("a compressed file opens")];
            let (result, _) = plain_run(&inputs, &mapper, &Options::default());
            assert!(
                matches!(result, Err(pipeline::RunError::Input(_))),
                "damaged compressed data: {result:?}"
            );
            let _ = std::fs::remove_file(&path);
            return;
        }
    };
    let data = &decoded[..];
    let inputs = [opened.expect("a file that is no refused format opens")];

    // Dedup(Canonical) and Map always, with the default line limit; then,
    // chosen by the input's length (each run of the engine builds a thread
    // pool, so five per input would be slow), Dedup(First), Dedup(Count),
    // or Map with a 48-byte limit (longer lines are rejected).
    let third = [
        (Mode::Dedup(Emit::First), MAX_LINE_BYTES),
        (Mode::Dedup(Emit::Count), MAX_LINE_BYTES),
        (Mode::Map, 48),
    ][data.len() % 3];
    let runs = [
        (Mode::Dedup(Emit::Canonical), MAX_LINE_BYTES),
        (Mode::Map, MAX_LINE_BYTES),
        third,
    ];
    // One dedup run a input is repeated with spilling (by length, so every
    // mode gets its turn).
    let spilled_run = [0, 2][data.len() / 3 % 2];
    // Every other input's dedup runs are sorted.
    let sort = data.len() / 12 % 2 == 1;
    for (r, (mode, max_line_bytes)) in runs.into_iter().enumerate() {
        let run = Run {
            mode,
            max_line_bytes,
            memory_limit: None,
            cap: cap.filter(|_| matches!(mode, Mode::Dedup(_))),
            sort: sort && matches!(mode, Mode::Dedup(_)),
        };
        let out = check_run(data, &inputs, &mapper, &normalizer, run);
        if r == spilled_run && matches!(mode, Mode::Dedup(_)) {
            let spilled = Run {
                memory_limit: Some(1),
                ..run
            };
            let spilled = check_run(data, &inputs, &mapper, &normalizer, spilled);
            assert!(out == spilled, "{mode:?}: the spilled output differs");
        }
    }
    check_binary(data, &inputs, &mapper);
    drop(inputs);
    let _ = std::fs::remove_file(&path);
});

/// One run of the engine into memory, rejects counted and dropped, with
/// its output.
fn plain_run(
    inputs: &[Input],
    mapper: &Lines,
    options: &Options,
) -> (Result<pipeline::stats::Stats, pipeline::RunError>, Vec<u8>) {
    let mut out = Vec::new();
    let sinks = Sinks {
        out: &mut out,
        out_file: None,
        rejects: &mut Count::default(),
        set_aside: Default::default(),
        progress: &Unwatched,
        seen: None,
        forget: false,
    };
    let result = pipeline::run_on(pool(), inputs, mapper, options, sinks);
    (result, out)
}

/// A run that does not read binary inputs as text: one that looks binary
/// gives no line, all counted as binary; any other, what the text runs
/// gave.
fn check_binary(data: &[u8], inputs: &[Input], mapper: &Lines) {
    let run = |binary_as_text| {
        let options = Options {
            binary_as_text,
            ..Options::default()
        };
        let (stats, out) = plain_run(inputs, mapper, &options);
        let stats = stats.unwrap_or_else(|e| panic!("binary check: run failed: {e:?}"));
        assert!(stats.balances(), "binary check: {stats:?}");
        (out, stats)
    };
    let (out, stats) = run(false);
    if pipeline::looks_binary(data) {
        assert!(out.is_empty(), "a binary input gave output");
        assert_eq!(stats.binary_lines, stats.lines, "{stats:?}");
        assert_eq!(stats.binary.len(), usize::from(stats.lines > 0));
    } else {
        let (text, _) = run(true);
        assert!(out == text, "a text input read otherwise");
        assert_eq!(stats.binary_lines, 0);
    }
}

/// How one run of the engine is made.
#[derive(Clone, Copy)]
struct Run {
    mode: Mode,
    max_line_bytes: usize,
    memory_limit: Option<u64>,
    /// Classes kept per site.
    cap: Option<u64>,
    /// Classes written in byte order of their keys.
    sort: bool,
}

/// What the model makes of an input's first bytes.
enum Packed {
    Plain,
    /// Compressed: its lines, or `None` when the decoders fail.
    Decoded(Option<Vec<u8>>),
    /// A format the engine refuses.
    Refused,
}

/// The input decompressed, when it begins with a magic number the engine
/// knows (RFC 1952, RFC 8878 frames and skippable frames, bzip2's).
fn decompressed(data: &[u8]) -> Packed {
    let mut out = Vec::new();
    let read = |mut reader: Box<dyn Read + '_>, out: &mut Vec<u8>| reader.read_to_end(out).is_ok();
    let decoded = if data.starts_with(&[0x1f, 0x8b]) {
        read(Box::new(flate2::read::MultiGzDecoder::new(data)), &mut out)
    } else if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (data.len() >= 4 && (0x50..=0x5f).contains(&data[0]) && data[1..4] == [0x2a, 0x4d, 0x18])
    {
        match zstd::stream::read::Decoder::new(data) {
            Ok(decoder) => read(Box::new(decoder), &mut out),
            Err(_) => false,
        }
    } else if data.len() >= 10
        && data.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&data[3])
        && (data[4..10] == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]
            || data[4..10] == [0x17, 0x72, 0x45, 0x38, 0x50, 0x90])
    {
        read(Box::new(bzip2::read::MultiBzDecoder::new(data)), &mut out)
    } else if data.starts_with(&[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0]) || data.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        return Packed::Refused;
    } else {
        return Packed::Plain;
    };
    Packed::Decoded(decoded.then_some(out))
}

/// One run of the engine, checked against the model; returns its output.
fn check_run(
    data: &[u8],
    inputs: &[Input],
    mapper: &Lines,
    normalizer: &Normalizer,
    run: Run,
) -> Vec<u8> {
    let Run {
        mode,
        max_line_bytes,
        memory_limit,
        cap,
        sort,
    } = run;
    {
        let lines = model(data, &normalizer, max_line_bytes);
        let blank = lines.iter().filter(|(_, k)| k.is_none()).count() as u64;
        let rejected = lines
            .iter()
            .filter(|(_, k)| matches!(k, Some(Err(_))))
            .count() as u64;
        let accepted: Vec<(&[u8], &[u8])> = lines
            .iter()
            .filter_map(|(l, k)| match k {
                Some(Ok(key)) => Some((&l[..], &key[..])),
                _ => None,
            })
            .collect();
        let keys: HashSet<&[u8]> = accepted.iter().map(|&(_, k)| k).collect();

        let options = Options {
            mode,
            invalid: Invalid::Reject,
            threads: 1,
            max_line_bytes,
            memory_limit,
            temp_dir: temp_dir(),
            per_site_cap: cap,
            sort,
            binary_as_text: true,
            ..Options::default()
        };
        let mut out = Vec::new();
        let mut sink = Count::default();
        let sinks = Sinks {
            out: &mut out,
            out_file: None,
            rejects: &mut sink,
            set_aside: Default::default(),
            progress: &Unwatched,
            seen: None,
            forget: false,
        };
        let stats = pipeline::run_on(pool(), inputs, mapper, &options, sinks)
            .unwrap_or_else(|e| panic!("{mode:?}: run failed: {e:?}"));
        // A sorted run under a cap decides in memory: it never spills.
        if memory_limit.is_some() && stats.unique > 0 && !(sort && cap.is_some()) {
            assert!(stats.spill.is_some(), "{mode:?}: a 1-byte limit did not spill");
        }

        assert!(
            stats.balances(),
            "{mode:?}: counts do not balance: {stats:?}"
        );
        assert_eq!(
            sink.n,
            stats.rejected_total(),
            "{mode:?}: rejects reported vs counted"
        );
        assert_eq!(sink.finished, 1, "{mode:?}: RejectSink::finish calls");
        assert!(
            out.is_empty() || out.ends_with(b"\n"),
            "{mode:?}: output ends mid-line"
        );
        let out_lines: Vec<&[u8]> = if out.is_empty() {
            Vec::new()
        } else {
            out[..out.len() - 1].split(|&b| b == b'\n').collect()
        };
        assert_eq!(
            out_lines.len() as u64,
            stats.unique,
            "{mode:?}: output lines vs stats.unique"
        );

        // The model's counts.
        assert_eq!(stats.lines, lines.len() as u64, "{mode:?}: lines");
        assert_eq!(stats.blank, blank, "{mode:?}: blank");
        assert_eq!(stats.rejected_total(), rejected, "{mode:?}: rejected");
        assert_eq!(stats.passed, 0);

        match mode {
            Mode::Map => {
                for line in &out_lines {
                    assert!(
                        keys.contains(line),
                        "Map: output line {:?} is no input line's normalization",
                        String::from_utf8_lossy(line)
                    );
                }
                let expected: Vec<&[u8]> = accepted.iter().map(|&(_, k)| k).collect();
                assert_eq!(out_lines, expected, "Map: output vs model");
                assert_eq!(stats.duplicates, 0);
            }
            Mode::Dedup(emit) => {
                let mut seen = HashSet::new();
                let mut firsts: Vec<(&[u8], &[u8])> = Vec::new();
                let mut counts: HashMap<&[u8], u64> = HashMap::new();
                let mut per_site: HashMap<u8, u64> = HashMap::new();
                let mut capped = 0u64;
                for &(line, key) in &accepted {
                    *counts.entry(key).or_default() += 1;
                    if !seen.insert(key) {
                        continue;
                    }
                    let kept = per_site.entry(site(key)).or_default();
                    if cap.is_some_and(|cap| *kept >= cap) {
                        capped += 1;
                        continue;
                    }
                    *kept += 1;
                    firsts.push((line, key));
                }
                if sort {
                    firsts.sort_by_key(|&(_, key)| key);
                }
                assert_eq!(
                    stats.unique,
                    firsts.len() as u64,
                    "{mode:?}: unique vs model"
                );
                assert_eq!(stats.capped, capped, "{mode:?}: capped vs model");
                assert_eq!(stats.duplicates, (accepted.len() - seen.len()) as u64);
                let expected: Vec<Vec<u8>> = match emit {
                    Emit::Canonical => firsts.iter().map(|&(_, k)| k.to_vec()).collect(),
                    Emit::First => firsts.iter().map(|&(l, _)| l.to_vec()).collect(),
                    Emit::Count => firsts
                        .iter()
                        .map(|&(_, k)| [format!("{}\t", counts[k]).as_bytes(), k].concat())
                        .collect(),
                    // Not among the modes run above (`runs`, `third`).
                    Emit::Verdict | Emit::Nothing => unreachable!("{mode:?} is not fuzzed"),
                };
                // Pairwise distinct (for `first`, by canonical form).
                let distinct: HashSet<Vec<u8>> = out_lines
                    .iter()
                    .map(|l| match emit {
                        Emit::First => normalizer
                            .normalize(std::str::from_utf8(l).unwrap())
                            .unwrap()
                            .into_bytes(),
                        _ => l.to_vec(),
                    })
                    .collect();
                assert_eq!(
                    distinct.len(),
                    out_lines.len(),
                    "{mode:?}: output lines not distinct"
                );
                let got: Vec<Vec<u8>> = out_lines.iter().map(|l| l.to_vec()).collect();
                assert!(
                    got == expected,
                    "{mode:?}: output vs model:\n got {:?}\nwant {:?}",
                    got.iter()
                        .map(|l| String::from_utf8_lossy(l))
                        .collect::<Vec<_>>(),
                    expected
                        .iter()
                        .map(|l| String::from_utf8_lossy(l))
                        .collect::<Vec<_>>()
                );
            }
        }
        out
    }
}
