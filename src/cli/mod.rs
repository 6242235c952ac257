//! The command line: flags (clap), one module per subcommand, and the errors
//! that end a run with exit code 2.
//!
//! It knows flags and the words a person reads; every decision about URIs,
//! lines and files is the library's.

pub mod args;
pub mod cmd;
pub mod engine;
pub mod progress;
pub mod rejects;
pub mod serve;

use std::fmt;
use std::io;

use clap::{Parser, Subcommand};

use urinorm::escape::escape_str;
use urinorm::pipeline::input::{Input, InputError, MmapChoice, STDIN};
use urinorm::pipeline::{RunError, SpoolError};
use urinorm::store::StoreError;
use urinorm::sys::os_error::Reason;

/// `urinorm --version`: the program's, and the Public Suffix List's it
/// carries.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (Public Suffix List built in: psl ",
    urinorm::psl_version!(),
    ")"
);

/// Normalize and deduplicate URIs in bulk, to the letter of RFC 3986.
#[derive(Parser, Debug)]
#[command(name = "urinorm", version = VERSION, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Write each accepted line's canonical form at a rung, in order (--aligned: one line per input line).
    Normalize(cmd::normalize::NormalizeArgs),
    /// Write each equivalence class once, in first-occurrence order.
    Dedup(cmd::dedup::DedupArgs),
    /// Measure what each rung and preset would merge on these lines, with examples.
    Ladder(cmd::ladder::LadderArgs),
    /// Resolve each reference against a base URI (RFC 3986 §5.2), one output line per accepted line (--aligned: per input line).
    Resolve(cmd::resolve::ResolveArgs),
    /// Site rules learned from a crawl index (`rules learn`).
    Rules(cmd::rules::RulesCommandArgs),
    /// Look into, check, fill or compact a seen store (see `dedup --seen`).
    Seen(cmd::seen::SeenCommandArgs),
    /// Serve a seen store over HTTP to many crawler processes: POST lines, get a verdict for each.
    Serve(serve::ServeArgs),
    /// Show what each rung makes of one URI, and which rules changed it.
    Explain(cmd::explain::ExplainArgs),
    /// List the protocol rung's transforms and presets.
    Transforms,
    /// Write a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(cmd::docs::CompletionsArgs),
    /// Write the manual pages (roff): `urinorm man > urinorm.1`, one
    /// subcommand's (`urinorm man seen add`), or every page into a
    /// directory (`urinorm man --dir ~/.local/share/man/man1`).
    Man(cmd::docs::ManArgs),
}

/// How a run that completed went: it decides the exit code.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Lines that were not URI references and so produced no output.
    pub rejected: u64,
    /// The run was interrupted and ended early, its work saved.
    pub interrupted: bool,
    /// An input was skipped whole (it looked binary): none of its lines
    /// was used, which a cron job must notice as it notices rejects.
    pub skipped_inputs: bool,
}

impl Outcome {
    /// 0 when every line was accepted, 1 when some were rejected (or an
    /// input was skipped as binary); 130 when interrupted (as a shell
    /// reports Ctrl-C).
    pub fn exit_code(self) -> u8 {
        match self.interrupted {
            true => 130,
            false => u8::from(self.rejected > 0 || self.skipped_inputs),
        }
    }
}

/// What stops a run: exit code 2 and one sentence.
#[derive(Debug)]
pub enum Error {
    /// An input could not be opened or read.
    Input(InputError),
    /// Writing the output failed.
    Output { name: String, source: io::Error },
    /// The command line asks for something that cannot be done.
    Usage(String),
    /// The engine stopped: a full disk while spilling, threads that could
    /// not start, a bug.
    Run(RunError),
    /// A seen store could not be opened, read or written.
    Seen(StoreError),
    /// A rules file (`--rules`, `--rules-clearurls`) cannot be used.
    Rules(urinorm::rules::RulesError),
}

impl Error {
    /// Whether this is a write to a closed pipe (`urinorm … | head`): not an error.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Output { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }

    /// An output error on standard output.
    pub fn stdout(source: io::Error) -> Error {
        Error::Output {
            name: "<stdout>".to_string(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(e) => e.fmt(f),
            Error::Output { name, source } => {
                write!(f, "cannot write '{}': {}", escape_str(name), Reason(source))?;
                match is_spool_error(source) {
                    true => f.write_str("; choose a disk with room with --temp-dir"),
                    false => Ok(()),
                }
            }
            Error::Usage(message) => f.write_str(message),
            // The library says what failed; the command line, what to do.
            Error::Run(e @ RunError::Spill(_)) => write!(
                f,
                "{e}; choose a disk with room with --temp-dir, or raise --memory-limit"
            ),
            Error::Run(e) => e.fmt(f),
            Error::Seen(
                e @ StoreError::Locked {
                    serving: Some(url), ..
                },
            ) => write!(
                f,
                "{e}, which never finishes; change the store through it: POST {url}/v1/add, /v1/forget (URLs, one a line), /v1/expire?older-than=DURATION, /v1/compact (`seen stats`, `seen verify` and `seen backup` need no lock)",
                url = escape_str(url)
            ),
            Error::Seen(e @ StoreError::Locked { .. }) => write!(
                f,
                "{e}; wait for it to finish, or ask to wait for it (dedup --seen-wait, seen --wait)"
            ),
            Error::Seen(e @ StoreError::ConfigMismatch { stored, .. }) => {
                write!(
                    f,
                    "{e}; the store's keys are made with: {}",
                    flags_of(stored)
                )
            }
            Error::Seen(e) => e.fmt(f),
            Error::Rules(e) => e.fmt(f),
        }
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Seen(e)
    }
}

impl From<RunError> for Error {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Input(e) => Error::Input(e),
            RunError::Seen(e) => Error::Seen(e),
            other => Error::Run(other),
        }
    }
}

/// The key flags that make keys with the settings of `config` (a seen
/// store's), as far as flags can: a tracking list, rules files or a Public
/// Suffix List are named by what the store recorded of them.
pub(crate) fn flags_of(config: &urinorm::store::Config) -> String {
    use urinorm::normalize::protocol::{PRESETS, Preset, Transform};
    let mut flags = Vec::new();
    match config.get("transforms") {
        None => flags.push(format!("--rung {}", config.get("rung").unwrap_or("scheme"))),
        Some(names) => {
            let names: Vec<&str> = names.split(',').filter(|n| !n.is_empty()).collect();
            // The preset fewest --with and --without flags away.
            let edits = |preset: &Preset| -> Vec<String> {
                let theirs: Vec<Transform> = preset.transforms().collect();
                Transform::ALL
                    .into_iter()
                    .filter_map(|t| match (names.contains(&t.name()), theirs.contains(&t)) {
                        (true, false) => Some(format!("--with {}", t.name())),
                        (false, true) => Some(format!("--without {}", t.name())),
                        _ => None,
                    })
                    .collect()
            };
            let (preset, edits) = PRESETS
                .iter()
                .map(|p| (p, edits(p)))
                .min_by_key(|(_, edits)| edits.len())
                .expect("presets");
            flags.push(format!("--preset {}", preset.name));
            flags.extend(edits);
        }
    }
    if let Some(key) = config.get("key").filter(|&k| k != "canonical") {
        flags.push(format!("--key {key}"));
    }
    if let Some(fields) = config.get("key-fields") {
        flags.push(format!("--key-fields {fields}"));
    }
    if let Some(delimiter) = config.get("delimiter") {
        flags.push(format!("--delimiter '{delimiter}'"));
    }
    for (setting, flag) in [
        ("tracking", "--tracking-params"),
        ("rules", "--rules/--rules-clearurls"),
        ("psl", "--psl"),
    ] {
        match config.get(setting) {
            Some(what) if what.starts_with("built-in") => {}
            None => {}
            Some(what) => flags.push(format!("{flag} (the store's: {})", escape_str(what))),
        }
    }
    flags.join(" ")
}

/// Runs the parsed command line.
/// Whether writing failed in the temporary copy of the output (a seen
/// store's run on standard output), which `--temp-dir` moves.
fn is_spool_error(error: &io::Error) -> bool {
    error
        .get_ref()
        .is_some_and(|inner| inner.is::<SpoolError>())
}

pub fn run(cli: Cli) -> Result<Outcome, Error> {
    match cli.command {
        Command::Normalize(args) => cmd::normalize::run(&args),
        Command::Dedup(args) => cmd::dedup::run(&args),
        Command::Resolve(args) => cmd::resolve::run(&args),
        Command::Ladder(args) => cmd::ladder::run(&args),
        Command::Seen(args) => cmd::seen::run(&args),
        Command::Rules(args) => cmd::rules::run(&args),
        Command::Serve(args) => serve::run(&args),
        Command::Explain(args) => cmd::explain::run(&args),
        Command::Transforms => cmd::transforms::run(),
        Command::Completions(args) => cmd::docs::completions(&args),
        Command::Man(args) => cmd::docs::man(&args),
    }
}

/// Opens the inputs named on the command line; none means standard input.
pub fn open_inputs(files: &[String]) -> Result<Vec<Input>, Error> {
    // SAFETY: these are the files the user named; like ripgrep and sort,
    // we read them mapped and accept that a file another process truncates
    // under us mid-run can end the run (SIGBUS), for reading without a copy.
    let mmap = unsafe { MmapChoice::auto() };
    open_each(files, |name| Input::open(name, mmap))
}

/// `files` (standard input if none), each opened by `open`.
pub fn open_each(
    files: &[String],
    open: impl Fn(&str) -> Result<Input, InputError>,
) -> Result<Vec<Input>, Error> {
    let stdin = [STDIN.to_string()];
    let names = if files.is_empty() { &stdin[..] } else { files };
    Ok(names
        .iter()
        .map(|name| open(name))
        .collect::<Result<Vec<_>, _>>()?)
}

/// The base URI of `--base`, which must be a URI with a scheme (RFC 3986 §5.1).
pub fn absolute_base(base: &str) -> Result<urinorm::UriRef<'_>, Error> {
    let uri = urinorm::UriRef::parse(base).map_err(|e| {
        Error::Usage(format!(
            "the base '{}' is not a URI reference: {e}",
            escape_str(base)
        ))
    })?;
    if uri.is_relative() {
        return Err(Error::Usage(format!(
            "the base '{}' has no scheme (RFC 3986 §5.1)",
            escape_str(base)
        )));
    }
    Ok(uri)
}

/// Writes `text` and a newline to standard output (a closed pipe, as in
/// `urinorm … | head`, is not an error: see [`Error::is_broken_pipe`]).
pub fn print_line(text: &str) -> Result<(), Error> {
    use std::io::Write;
    writeln!(io::stdout().lock(), "{text}").map_err(Error::stdout)
}

/// `n` and its noun: "1 run", "2 runs".
pub fn counted(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// The worker threads `-j` asks for; all cores when it is not given.
/// Writes `text` to `path` whole or not at all (a temporary file beside
/// it, synced, then renamed).
pub fn write_whole(path: &std::path::Path, text: &str) -> Result<(), Error> {
    let failed = |source| Error::Output {
        name: path.display().to_string(),
        source,
    };
    let mut output = urinorm::pipeline::output::Output::create(Some(path), None).map_err(failed)?;
    output.writer().write_all(text.as_bytes()).map_err(failed)?;
    output.finish().map_err(failed)
}

pub fn thread_count(requested: Option<usize>) -> Result<usize, Error> {
    match requested {
        Some(0) => Err(Error::Usage(
            "-j takes a number of threads of at least 1".into(),
        )),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}
