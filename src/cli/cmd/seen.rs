//! `urinorm seen`: look into a seen store, check it, fill it, compact it.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;
use urinorm::escape::escape_str;
use urinorm::seen::{Access, Store};

use super::dedup::SeenArgs;
use super::normalize::{ColumnArgs, RungArgs};
use crate::cli::engine::{Job, MemoryArgs, ReadArgs, execute};
use crate::cli::{Error, Outcome, counted, print_line};
use urinorm::pipeline::{Emit, Mode};

#[derive(Args, Debug)]
pub struct SeenCommandArgs {
    #[command(subcommand)]
    pub command: SeenCommand,
}

#[derive(Subcommand, Debug)]
pub enum SeenCommand {
    /// Show what a store holds: keys, files, bytes, configuration, last commit.
    Stats(StatsArgs),
    /// Read every file of a store and check every checksum (exit 2 naming a damaged file).
    Verify(DirArgs),
    /// Admit the keys of these files' lines to a store, writing no output.
    Add(Box<AddArgs>),
    /// Merge a store's runs into one.
    Compact(DirArgs),
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The store's directory.
    pub dir: PathBuf,
    /// Write the figures as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct DirArgs {
    /// The store's directory.
    pub dir: PathBuf,
    /// When another run is writing the store, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Args, Debug)]
pub struct AddArgs {
    /// The store's directory (made if missing).
    pub dir: PathBuf,
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// When another run is writing the store, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

pub fn run(args: &SeenCommandArgs) -> Result<Outcome, Error> {
    match &args.command {
        SeenCommand::Stats(args) => stats(args),
        SeenCommand::Verify(args) => verify(args),
        SeenCommand::Add(args) => add(args),
        SeenCommand::Compact(args) => compact(args),
    }
}

fn shown(store: &Store) -> String {
    escape_str(&store.dir().display().to_string())
}

fn stats(args: &StatsArgs) -> Result<Outcome, Error> {
    let store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    let bytes: u64 = store
        .files()
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let (commits, at) = store.last_commit();
    let at = at.map(|t| humantime::format_rfc3339_seconds(t).to_string());
    let text = if args.json {
        format!(
            "{:#}",
            json!({
                "dir": store.dir().display().to_string(),
                "keys": store.keys(),
                "runs": store.runs(),
                "files": store.files().len(),
                "bytes": bytes,
                "config": store.config().to_json(),
                "commits": commits,
                "last_commit": at,
            })
        )
    } else {
        format!(
            "seen store '{}'\n  keys: {}\n  files: {} ({} and the manifest), {bytes} bytes\n  configuration: {}\n  commits: {commits}, the last at {}",
            shown(&store),
            store.keys(),
            store.files().len(),
            counted(store.runs(), "run"),
            store.config(),
            at.as_deref().unwrap_or("(none yet)"),
        )
    };
    print_line(&text)?;
    Ok(Outcome::default())
}

fn verify(args: &DirArgs) -> Result<Outcome, Error> {
    let store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    store.verify()?;
    print_line(&format!(
        "seen store '{}': {} keys in {}, every checksum matches",
        shown(&store),
        store.keys(),
        counted(store.runs(), "run")
    ))?;
    Ok(Outcome::default())
}

fn add(args: &AddArgs) -> Result<Outcome, Error> {
    let mapper = args.columns.mapper(args.rung.normalizer()?)?;
    let seen = SeenArgs {
        seen: Some(args.dir.clone()),
        seen_readonly: false,
        seen_wait: args.wait,
        commit_every: std::time::Duration::from_secs(1),
    };
    let extra = [
        ("command", json!("seen add")),
        ("rung", json!(args.rung.rung().name())),
    ];
    let job = Job {
        memory: Some(&args.memory),
        seen: seen.request(&mapper),
        ..Job::new(&mapper, Mode::Dedup(Emit::Nothing), &extra)
    };
    execute(&args.read, None, None, job)
}

fn compact(args: &DirArgs) -> Result<Outcome, Error> {
    let mut store = Store::open_existing(&args.dir, Access::Write { wait: args.wait })?;
    let before = store.runs();
    store.compact()?;
    print_line(&format!(
        "seen store '{}': {} keys, {} merged into {}",
        shown(&store),
        store.keys(),
        counted(before, "run"),
        store.runs()
    ))?;
    Ok(Outcome::default())
}
