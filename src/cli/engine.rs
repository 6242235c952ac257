//! The glue between a subcommand and the engine: flags every bulk command
//! shares, opening inputs and outputs, and the summary at the end.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{Value, json};
use urinorm::pipeline::Format;
use urinorm::pipeline::compress::Compression;
use urinorm::pipeline::output::{Output, RejectSink, compression_named};
use urinorm::pipeline::stats::Stats;
use urinorm::pipeline::{
    self, Invalid, LineMapper, MAX_LINE_BYTES, Mode, Options, RunError, SetAside, Sinks,
};
use urinorm::store::{Access, Clock, Committed, Config, Stamp, Store, StoreError};

use super::progress::Bar;
use super::rejects::{EXAMPLES, RejectExamples, RejectsToFile, RejectsToStderr};
use super::{Error, Outcome, counted, open_inputs, thread_count};
use urinorm::escape::escape_str;

/// Flags of every command that reads lines in bulk and writes lines.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub read: ReadArgs,
    /// Write the output to this file (it appears only when complete).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Answer each line as soon as it is read, flushing the output each
    /// time, rather than a block of lines at a time (for a coprocess).
    #[arg(long)]
    pub line_buffered: bool,
    /// Compress the output (default: as the name of -o says: .gz, .zst,
    /// .bz2; else none). Inputs need no flag: their first bytes tell.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub compress: Option<Compress>,
    /// The output's compression level (default: the format's own, as
    /// `gzip`, `zstd` and `bzip2` use it: 6, 3, 9). Lower is faster.
    #[arg(long, value_name = "N")]
    pub compress_level: Option<u32>,
}

/// The output's compression, as `--compress` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compress {
    Gzip,
    Zstd,
    Bzip2,
    None,
}

impl RunArgs {
    /// The compression of the output: `--compress`, else as `-o`'s name
    /// says (a format urinorm does not write is refused, before any work),
    /// at `--compress-level`.
    pub fn compression(&self) -> Result<Option<Compression>, Error> {
        let format = match self.compress {
            Some(Compress::Gzip) => Some(Format::Gzip),
            Some(Compress::Zstd) => Some(Format::Zstd),
            Some(Compress::Bzip2) => Some(Format::Bzip2),
            Some(Compress::None) => None,
            None => match &self.output {
                Some(path) => compression_named(path).map_err(|name| {
                    Error::Usage(format!(
                        "-o '{}' names .{name} compression, which urinorm does not write: use .gz, .zst or .bz2, or --compress none for plain text under this name",
                        escape_str(&path.display().to_string())
                    ))
                })?,
                None => None,
            },
        };
        match (format.map(Compression::new), self.compress_level) {
            (compression, None) => Ok(compression),
            (Some(compression), Some(level)) => compression
                .with_level(level)
                .map(Some)
                .map_err(|e| Error::Usage(format!("--compress-level: {e}"))),
            (None, Some(_)) => Err(Error::Usage(
                "--compress-level needs a compressed output: -o with .gz, .zst or .bz2, or --compress"
                    .into(),
            )),
        }
    }

    /// `-o`: a path, or `-` for standard output (as curl's and tar's).
    pub fn output_path(&self) -> Option<&Path> {
        self.output.as_deref().filter(|p| *p != Path::new("-"))
    }
}

/// Flags of every command that reads lines in bulk.
#[derive(Args, Debug)]
pub struct ReadArgs {
    /// Files of URIs, one per line; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Write each rejected line to this file as `file:line<TAB>reason<TAB>raw`.
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,
    /// Write the run's counts to this file as JSON.
    #[arg(long, value_name = "FILE.json")]
    pub stats: Option<PathBuf>,
    /// What to do with a line that is not a URI reference.
    #[arg(long, value_enum, default_value_t = Invalid::Reject)]
    pub invalid: Invalid,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// No summary line at the end, and no progress bar.
    #[arg(short, long)]
    pub quiet: bool,
    /// Reject lines longer than this many bytes (never truncate them).
    #[arg(long, value_name = "N", default_value_t = MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// The first line of each input is a header: write it as it is (counted
    /// as a header, never rejected).
    #[arg(long)]
    pub header: bool,
    /// Read an input that looks binary (a NUL byte in its first 64 KiB) as
    /// lines too; by default its lines are counted and none is read.
    #[arg(short = 'a', long)]
    pub text: bool,
}

/// How much memory the dedup set may take, and where it spills past that.
#[derive(Args, Debug, Default)]
pub struct MemoryArgs {
    /// Bound the run's tables (a dedup's distinct keys, the URLs rules are
    /// learned from) to SIZE (e.g. 512M, 4G; default half the physical
    /// memory). Past it, they spill to partition files on disk: the output
    /// is the same bytes, only slower.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub memory_limit: Option<u64>,
    /// Where spill files go (default: the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,
}

impl MemoryArgs {
    pub(crate) fn limit(&self) -> u64 {
        self.memory_limit.unwrap_or_else(default_memory_limit)
    }

    pub(crate) fn temp_dir(&self) -> PathBuf {
        self.temp_dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// Half the physical memory (from /proc/meminfo), or 4 GiB where that
/// cannot be read: room for the rest of the run and for other programs.
fn default_memory_limit() -> u64 {
    let total_kib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        });
    total_kib.map_or(4 << 30, |kib| kib * 1024 / 2)
}

/// A size such as `4096`, `64K`, `512M`, `4G` or `1T` (powers of 1024; a
/// trailing `B` or `iB` is allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let upper = text.trim().to_ascii_uppercase();
    let number = upper.trim_end_matches("IB").trim_end_matches('B');
    let (digits, shift) = match number.as_bytes().last() {
        Some(b'K') => (&number[..number.len() - 1], 10),
        Some(b'M') => (&number[..number.len() - 1], 20),
        Some(b'G') => (&number[..number.len() - 1], 30),
        Some(b'T') => (&number[..number.len() - 1], 40),
        _ => (number, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("'{text}' is not a size such as 512M or 4G"))
}

/// Where rejected lines are reported when `--rejects` is not given.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum DefaultRejects {
    /// Each on standard error, as `file:line: reason` (normalize, resolve).
    EachOnStderr,
    /// Counted, with the first few shown in the summary (dedup).
    Summarized,
}

/// What a bulk command asks of the engine, beside the flags it shares.
pub struct Job<'a> {
    pub mapper: &'a dyn LineMapper,
    pub mode: Mode,
    pub aligned: bool,
    pub default_rejects: DefaultRejects,
    /// Deduplicating commands: how much memory the set may take.
    pub memory: Option<&'a MemoryArgs>,
    /// A seen store to run against.
    pub seen: Option<SeenRequest<'a>>,
    /// Fields the stats JSON gets besides the counts.
    pub extra: &'a [(&'a str, Value)],
    /// Answer each line as soon as it is read.
    pub line_buffered: bool,
    /// Deduplicating: at most this many classes of each site.
    pub per_site_cap: Option<u64>,
    /// Against a seen store: at most so many keys of each site in it.
    pub per_site_budget: Option<urinorm::pipeline::Budget>,
    /// Deduplicating: write the classes sorted by key.
    pub sort: bool,
    /// Deduplicating: the files the capped lines (`--capped`) and the
    /// duplicate lines (`--dupes`) are written to.
    pub capped: Option<&'a Path>,
    pub dupes: Option<&'a Path>,
}

impl<'a> Job<'a> {
    /// A job mapping every line, or deduplicating with `memory`.
    pub fn new(mapper: &'a dyn LineMapper, mode: Mode, extra: &'a [(&'a str, Value)]) -> Job<'a> {
        Job {
            mapper,
            mode,
            aligned: false,
            default_rejects: match mode {
                Mode::Map => DefaultRejects::EachOnStderr,
                Mode::Dedup(_) => DefaultRejects::Summarized,
            },
            memory: None,
            seen: None,
            extra,
            line_buffered: false,
            per_site_cap: None,
            per_site_budget: None,
            sort: false,
            capped: None,
            dupes: None,
        }
    }
}

/// A seen store to open for a run.
pub struct SeenRequest<'a> {
    pub dir: &'a Path,
    /// The settings the run's keys are made with.
    pub config: Config,
    pub readonly: bool,
    /// Wait for another writer rather than fail.
    pub wait: bool,
    /// Line-buffered to a stream: commit at least this often.
    pub commit_every: std::time::Duration,
    /// The run's time and the maximum age of a key held.
    pub clock: Clock,
    /// Forget the keys of the lines the store holds, rather than admit
    /// the others (`seen forget`).
    pub forget: bool,
    /// Refuse a clock (a `--now`) earlier than the store's last commit:
    /// what it admits would be older than what the store holds, unless a
    /// replay means it (`--replay`).
    pub refuse_clock_back: bool,
}

/// The time a command that commits or judges ages takes as now.
#[derive(Args, Debug)]
pub struct NowArgs {
    /// Take this time as now (RFC 3339, UTC: 2026-11-25T00:00:00Z) rather
    /// than the clock's: keys admitted are stamped with it, and ages are
    /// judged from it (for replays and tests).
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Stamp>,
    /// Take a --now earlier than the store's last commit (a replay of old
    /// batches on purpose); without it, that is refused.
    #[arg(long, requires = "now")]
    pub replay: bool,
}

impl NowArgs {
    pub fn clock(&self) -> Clock {
        clock_at(self.now)
    }

    /// Whether a clock earlier than the store's last commit is refused.
    pub fn refuse_clock_back(&self) -> bool {
        self.now.is_some() && !self.replay
    }
}

/// The clock at `now`, or the system's.
pub fn clock_at(now: Option<Stamp>) -> Clock {
    now.map_or_else(Clock::system, Clock::at)
}

/// Parses `--now`.
pub fn parse_now(text: &str) -> Result<Stamp, String> {
    let time = humantime::parse_rfc3339(text)
        .map_err(|e| format!("{e}: give a time like 2026-11-25T00:00:00Z"))?;
    Stamp::of(time).map_err(|e| e.to_string())
}

impl SeenRequest<'_> {
    /// Opens the store; when another writer holds it and the request
    /// waits, says so first (unless `quiet`).
    pub fn open(&self, quiet: bool) -> Result<Store, Error> {
        let access = match self.readonly {
            true => Access::ReadOnly,
            false => Access::Write { wait: false },
        };
        let mut store = self.open_with(access, quiet)?;
        store.set_clock(self.clock);
        let last = store.last_commit().1;
        let now = self.clock.now();
        match last.and_then(|time| Stamp::of(time).ok()) {
            Some(last) if self.refuse_clock_back && !self.readonly && now < last => {
                Err(Error::Usage(format!(
                    "--now {} is earlier than the seen store's last commit, at {}: what it admits would be stamped older than what the store holds; add --replay if replaying old batches is meant",
                    humantime::format_rfc3339_seconds(now.time()),
                    humantime::format_rfc3339_seconds(last.time()),
                )))
            }
            _ => Ok(store),
        }
    }

    fn open_with(&self, access: Access, quiet: bool) -> Result<Store, Error> {
        if self.forget {
            // Forgetting makes no store: one must be there.
            Store::open_existing(self.dir, Access::ReadOnly)?;
        }
        match Store::open(self.dir, &self.config, access) {
            Err(StoreError::Locked { holder, .. }) if self.wait => {
                if !quiet {
                    let holder =
                        holder.map_or("another process".into(), |pid| format!("process {pid}"));
                    let _ = writeln!(
                        io::stderr(),
                        "urinorm: waiting for {holder}, which is writing the seen store '{}'",
                        escape_str(&self.dir.display().to_string())
                    );
                }
                Ok(Store::open(
                    self.dir,
                    &self.config,
                    Access::Write { wait: true },
                )?)
            }
            opened => Ok(opened?),
        }
    }
}

/// Runs the engine on the lines `read` names as `job` says, writing to
/// `output` (standard output when `None`), compressed in `compression`.
pub fn execute(
    read: &ReadArgs,
    output: Option<&Path>,
    compression: Option<Compression>,
    job: Job<'_>,
) -> Result<Outcome, Error> {
    for (flag, path) in [("--stats", &read.stats), ("--rejects", &read.rejects)] {
        if path.as_deref() == Some(Path::new("-")) {
            return Err(Error::Usage(format!(
                "{flag} takes a file name: '-' (standard output) would mix it into the output"
            )));
        }
    }
    let inputs = open_inputs(&read.files)?;
    let threads = thread_count(read.threads)?;
    let written = [
        output,
        read.rejects.as_deref(),
        read.stats.as_deref(),
        job.capped,
        job.dupes,
    ];
    let temp_dir = job.memory.map(MemoryArgs::temp_dir);
    sweep_leftovers(
        written
            .into_iter()
            .flatten()
            .map(directory_of)
            .chain(temp_dir),
        read.quiet,
    );
    // Every output path is opened (as a temporary file beside it) before
    // any input is read: a path that cannot be written stops the run at
    // once, and the temporary files already made go with it. So is the
    // seen store, with its lock and its configuration checked.
    let output_name = output.map_or("<stdout>".to_string(), |p| p.display().to_string());
    let write_error = |source: io::Error| Error::Output {
        name: output_name.clone(),
        source,
    };
    // Compressed on as many threads as the run has: the compressing threads
    // work beside the workers, which wait on the writer when it is behind.
    let compression = compression.map(|compression| compression.on_threads(threads));
    let mut out = Output::create(output, compression).map_err(write_error)?;
    let mut to_file = read
        .rejects
        .as_deref()
        .map(|path| RejectsToFile::create(path).map_err(|source| path_error(path, source)))
        .transpose()?;
    let stats_output = read
        .stats
        .as_deref()
        .map(|path| Output::create(Some(path), None).map_err(|source| path_error(path, source)))
        .transpose()?;
    let create = |path: &Path| Output::create(Some(path), None).map_err(|e| path_error(path, e));
    let mut capped = job.capped.map(create).transpose()?;
    let mut dupes = job.dupes.map(create).transpose()?;
    if let Some(memory) = job.memory {
        let dir = memory.temp_dir();
        Output::check_dir(&dir).map_err(|source| path_error(&dir, source))?;
    }
    let mut store = job.seen.as_ref().map(|s| s.open(read.quiet)).transpose()?;
    // Line by line into a store, Ctrl-C ends the input: what was answered
    // is committed before the process exits.
    let _deferred = (job.line_buffered && store.as_ref().is_some_and(Store::is_writable))
        .then(urinorm::sys::cleanup::defer_interrupts);

    let mut examples = RejectExamples::default();
    let mut to_stderr = RejectsToStderr;
    let rejects: &mut dyn RejectSink = match (&mut to_file, job.default_rejects) {
        (Some(to_file), _) => to_file,
        // Quiet: counted (and in the exit code), not each shown.
        (None, DefaultRejects::EachOnStderr) if !read.quiet => &mut to_stderr,
        (None, DefaultRejects::EachOnStderr) => &mut examples,
        (None, DefaultRejects::Summarized) => &mut examples,
    };

    let options = Options {
        mode: job.mode,
        invalid: read.invalid,
        threads,
        max_line_bytes: read.max_line_bytes,
        header: read.header,
        aligned: job.aligned,
        memory_limit: job.memory.map(MemoryArgs::limit),
        temp_dir: job
            .memory
            .map_or_else(std::env::temp_dir, MemoryArgs::temp_dir),
        line_buffered: job.line_buffered,
        commit_every: job
            .seen
            .as_ref()
            .map_or(Options::default().commit_every, |s| s.commit_every),
        per_site_cap: job.per_site_cap,
        per_site_budget: job.per_site_budget,
        sort: job.sort,
        binary_as_text: read.text,
    };
    let out_file = out.file().map_err(write_error)?;
    let unbounded = pipeline::memory_unbounded(&options, store.as_ref(), out_file.is_some());
    let limit_given = job.memory.is_some_and(|m| m.memory_limit.is_some());
    if limit_given && !read.quiet {
        let mut err = io::stderr().lock();
        if let Some(why) = unbounded {
            let _ = writeln!(
                err,
                "urinorm: --memory-limit cannot bound this run: {why}; its keys stay in memory"
            );
        }
        if job.dupes.is_some() {
            let _ = writeln!(
                err,
                "urinorm: --dupes keeps every class's first line in memory (about 100 bytes a class at its peak), beside --memory-limit"
            );
        }
    }
    let progress = Bar::new(&inputs, !read.quiet, output.is_none());
    let sinks = Sinks {
        out_file,
        out: out.writer(),
        rejects,
        set_aside: SetAside {
            capped: capped.as_mut().map(Output::writer),
            dupes: dupes.as_mut().map(Output::writer),
        },
        progress: &progress,
        seen: store.as_mut(),
        forget: job.seen.as_ref().is_some_and(|s| s.forget),
    };
    let stats = pipeline::run(&inputs, job.mapper, &options, sinks).map_err(|e| match e {
        RunError::Output(source) => write_error(source),
        RunError::Rejects(source) => Error::Output {
            name: read
                .rejects
                .as_ref()
                .map_or("<stderr>".into(), |p| p.display().to_string()),
            source,
        },
        other => other.into(),
    })?;
    drop(progress);
    // The lines set aside are in place before the store admits the batch:
    // a capped line is never lost to the next batch.
    for (output, path) in [(capped, job.capped), (dupes, job.dupes)] {
        if let (Some(output), Some(path)) = (output, path) {
            output.finish().map_err(|e| path_error(path, e))?;
        }
    }
    out.finish().map_err(write_error)?;
    // Only once the output is in place: a kill before this line leaves the
    // store as it was, and the batch is written again by the next run.
    let committed = match &mut store {
        Some(store) if store.is_writable() => {
            store.publish()?;
            // A live run committed as it went: all of its commits count.
            Some(store.committed_since_open())
        }
        _ => None,
    };

    let mut extra = job.extra.to_vec();
    if let Some(why) = unbounded {
        extra.push(("memory_unbounded", json!(why)));
    }
    if let Some(store) = &store {
        extra.push(("seen_store", seen_json(store, committed)));
    }
    if let (Some(mut stats_output), Some(path)) = (stats_output, &read.stats) {
        let json = format!("{:#}\n", stats.to_json(&extra));
        let written = stats_output.writer().write_all(json.as_bytes());
        written
            .and_then(|()| stats_output.finish())
            .map_err(|source| path_error(path, source))?;
    }
    if !read.quiet {
        report(&stats, &examples.examples);
        if let Some(store) = &store {
            report_store(store.dir(), store.keys(), store.runs(), committed);
        }
    }
    let interrupted = urinorm::sys::cleanup::interrupted();
    if interrupted && !read.quiet {
        let _ = writeln!(
            io::stderr(),
            "urinorm: interrupted; the lines answered were committed"
        );
    }
    Ok(Outcome {
        rejected: stats.rejected_total(),
        interrupted,
        skipped_inputs: !stats.binary.is_empty(),
    })
}

/// The stats JSON's account of the seen store.
fn seen_json(store: &Store, committed: Option<Committed>) -> Value {
    json!({
        "dir": store.dir().display().to_string(),
        "readonly": !store.is_writable(),
        "admitted": committed.map_or(0, |c| c.admitted - c.renewed),
        "readmitted": committed.map_or(0, |c| c.renewed),
        "forgotten": committed.map_or(0, |c| c.forgotten),
        "keys": store.keys(),
        "runs": store.runs(),
    })
}

/// The summary's line on the seen store in `dir`, which holds `keys` in
/// `runs` runs.
pub(crate) fn report_store(dir: &Path, keys: u64, runs: usize, committed: Option<Committed>) {
    let dir = escape_str(&dir.display().to_string());
    let runs = counted(runs, "run");
    let mut err = io::stderr().lock();
    let _ = match committed {
        Some(c) if c.forgotten > 0 => writeln!(
            err,
            "urinorm: seen store '{dir}': {} keys forgotten; it holds {keys} keys in {runs}",
            c.forgotten
        ),
        Some(c) if c.renewed > 0 => writeln!(
            err,
            "urinorm: seen store '{dir}': {} new keys admitted, and {} expired ones again; it holds {keys} keys in {runs}",
            c.admitted - c.renewed,
            c.renewed
        ),
        Some(c) => writeln!(
            err,
            "urinorm: seen store '{dir}': {} new keys admitted; it holds {keys} keys in {runs}",
            c.admitted
        ),
        None => writeln!(
            err,
            "urinorm: seen store '{dir}' read, not written (--seen-readonly): it holds {keys} keys"
        ),
    };
}

/// The directory a file named `path` is made in.
pub(crate) fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Removes what killed runs left in `dirs` (temporary outputs, spills:
/// [`urinorm::sys::cleanup::sweep`]), and says so.
pub fn sweep_leftovers(dirs: impl IntoIterator<Item = PathBuf>, quiet: bool) {
    let mut seen = Vec::new();
    for dir in dirs {
        if seen.contains(&dir) {
            continue;
        }
        let swept = urinorm::sys::cleanup::sweep(&dir);
        if swept.paths > 0 && !quiet {
            let _ = writeln!(
                io::stderr(),
                "urinorm: removed {} temporary files ({:.1} MiB) that killed runs left in '{}'",
                swept.paths,
                swept.bytes as f64 / (1 << 20) as f64,
                escape_str(&dir.display().to_string())
            );
        }
        seen.push(dir);
    }
}

/// An error writing the file at `path`, named as the user gave it.
pub(crate) fn path_error(path: &Path, source: io::Error) -> Error {
    Error::Output {
        name: path.display().to_string(),
        source,
    }
}

/// The summary on standard error: the counting line, and rejects by reason.
fn report(stats: &Stats, examples: &[String]) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "urinorm: {stats}");
    for name in &stats.binary {
        let _ = writeln!(
            err,
            "urinorm: '{}' looks like a binary file (a NUL byte in its first 64 KiB): its lines were counted, not read (--text reads them)",
            escape_str(name)
        );
    }
    for name in &stats.unlike_uris {
        let _ = writeln!(
            err,
            "urinorm: '{}' does not look like a list of URIs: most of its first lines are no URI at all",
            escape_str(name)
        );
    }
    for (reason, count) in &stats.rejected {
        let _ = writeln!(err, "urinorm:   rejected {count}: {reason}");
    }
    if !examples.is_empty() {
        let more = if stats.rejected_total() > EXAMPLES as u64 {
            " (use --rejects FILE for all)"
        } else {
            ""
        };
        let _ = writeln!(err, "urinorm: first rejected lines{more}:");
        for example in examples {
            let _ = writeln!(err, "urinorm:   {example}");
        }
    }
}
