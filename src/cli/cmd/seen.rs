//! `urinorm seen`: look into a seen store, check it, fill it, forget some
//! of it, expire what is old, compact it.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;
use std::time::Duration;
use urinorm::escape::escape_str;

use urinorm::store::{Access, Clock, Config, Stamp, Store, history_config, history_files};

use crate::cli::args::{BudgetArgs, ColumnArgs, Feeds, RungArgs};
use crate::cli::engine::{Job, MemoryArgs, NowArgs, ReadArgs, SeenRequest, execute};
use crate::cli::{Error, Outcome, counted, flags_of, print_line};
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
    /// Forget the keys of these files' lines (made with the store's key
    /// options, given as for `seen add`): the next batch answers them new.
    Forget(Box<LinesArgs>),
    /// Remove for good the keys admitted longer ago than --older-than.
    Expire(ExpireArgs),
    /// Merge a store's runs into one.
    Compact(DirArgs),
    /// Copy a store to a new directory, consistent as of one commit, without
    /// its writer lock: while `urinorm serve` or a batch writes it. The
    /// copy is verified, then made a store in one atomic rename.
    Backup(BackupArgs),
    /// Write every key a store holds, with the time it was admitted, as a
    /// Parquet history (a directory Spark, DuckDB and pyarrow read): one
    /// row a key, columns `fingerprint` and `admitted`.
    Export(ExportArgs),
    /// Admit to a store (made if missing) the keys of Parquet histories
    /// (`seen export`'s, or a Spark frontier's) that it does not hold, each
    /// with its time of admission.
    Import(ImportArgs),
    /// Rebuild a damaged store from its intact blocks, as one run: every
    /// key of a block whose checksum matches is kept; the damaged blocks'
    /// and unreadable runs' are lost, and counted.
    Salvage(DirArgs),
}

#[derive(Args, Debug)]
pub struct StatsArgs {
    /// The store's directory.
    pub dir: PathBuf,
    /// Write the figures as JSON.
    #[arg(long)]
    pub json: bool,
    /// In a store that keeps budgets: the budget each site has (as the
    /// runs give it), for what each of the sites listed has left.
    #[arg(long, value_name = "N")]
    pub budget: Option<u64>,
    /// Count a key admitted longer ago than this as not held, as the runs
    /// do (for the sites' counts).
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration)]
    pub seen_max_age: Option<std::time::Duration>,
    #[command(flatten)]
    pub now: NowArgs,
}

#[derive(Args, Debug)]
pub struct ExpireArgs {
    #[command(flatten)]
    pub dir: DirArgs,
    /// Remove the keys admitted longer ago than this (e.g. 30d, 12h).
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration)]
    pub older_than: std::time::Duration,
    #[command(flatten)]
    pub now: NowArgs,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The store's directory.
    pub dir: PathBuf,
    /// Where the copy goes: a directory that does not exist yet.
    pub dest: PathBuf,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The store's directory.
    pub dir: PathBuf,
    /// The history to write: a directory that does not exist yet.
    #[arg(short = 'o', long = "output", value_name = "HISTORY")]
    pub output: PathBuf,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The store's directory (made if missing, with the histories' key
    /// configuration).
    pub dir: PathBuf,
    /// Parquet histories: files, or directories of them.
    #[arg(required = true, value_name = "HISTORY")]
    pub histories: Vec<PathBuf>,
    /// When another run is writing the store, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub now: NowArgs,
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
    #[command(flatten)]
    pub lines: LinesArgs,
    /// A key admitted longer ago than this (e.g. 7d) counts as not held,
    /// and is admitted again with this run's time (counted as expired).
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration)]
    pub seen_max_age: Option<std::time::Duration>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Write the lines a budget holds back to FILE, one per key, as they
    /// were read, for a later batch to take.
    #[arg(long, value_name = "FILE", requires = "budget")]
    pub capped: Option<PathBuf>,
}

/// A store and lines whose keys go into it or out of it.
#[derive(Args, Debug)]
pub struct LinesArgs {
    /// The store's directory (made if missing, when adding).
    pub dir: PathBuf,
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// When another run is writing the store, wait for it instead of failing.
    #[arg(long)]
    pub wait: bool,
    #[command(flatten)]
    pub now: NowArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

pub fn run(args: &SeenCommandArgs) -> Result<Outcome, Error> {
    match &args.command {
        SeenCommand::Stats(args) => stats(args),
        SeenCommand::Verify(args) => verify(args),
        SeenCommand::Add(args) => {
            let clock = args.lines.now.clock();
            let clock = args
                .seen_max_age
                .map_or(clock, |age| clock.with_max_age(age));
            keys_of_lines(&args.lines, clock, Some(args))
        }
        SeenCommand::Forget(args) => keys_of_lines(args, args.now.clock(), None),
        SeenCommand::Expire(args) => expire(args),
        SeenCommand::Compact(args) => compact(args),
        SeenCommand::Backup(args) => backup(args),
        SeenCommand::Export(args) => export(args),
        SeenCommand::Import(args) => import(args),
        SeenCommand::Salvage(args) => salvage(args),
    }
}

fn shown(store: &Store) -> String {
    escape_str(&store.dir().display().to_string())
}

/// The ages `seen stats` counts keys by: admitted within the last day,
/// week and month (30 days), and before.
const AGES: [(&str, u64); 3] = [("day", 1), ("week", 7), ("month", 30)];

fn stats(args: &StatsArgs) -> Result<Outcome, Error> {
    let mut store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    let clock = args.now.clock();
    store.set_clock(
        args.seen_max_age
            .map_or(clock, |age| clock.with_max_age(age)),
    );
    let now = clock.now();
    let sites = nearest_budget(&store)?;
    let since: Vec<Stamp> = AGES
        .iter()
        .map(|&(_, days)| now.minus(Duration::from_secs(days * 86_400)))
        .collect();
    let ages = store.ages(&since)?;
    let bytes = store.bytes();
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
                "flags": flags_of(store.config()),
                "commits": commits,
                "last_commit": at,
                "keys_by_age": {
                    "now": humantime::format_rfc3339_seconds(now.time()).to_string(),
                    "day": ages[0],
                    "week": ages[1],
                    "month": ages[2],
                    "older": ages[3],
                },
                "sites": sites.as_ref().map(|s| s.to_json(args.budget)),
            })
        )
    } else {
        format!(
            "seen store '{}'\n  keys: {}\n{}  files: {} ({}{}), {bytes} bytes\n  configuration: {}\n  made by the flags: {}\n  commits: {commits}, the last at {}{}",
            shown(&store),
            store.keys(),
            age_table(&ages),
            store.files().len(),
            counted(store.runs(), "run"),
            match sites {
                Some(_) => ", the manifest and the site names",
                None => " and the manifest",
            },
            store.config(),
            flags_of(store.config()),
            at.as_deref().unwrap_or("(none yet)"),
            sites
                .as_ref()
                .map_or(String::new(), |s| s.to_text(args.budget)),
        )
    };
    print_line(&text)?;
    Ok(Outcome::default())
}

/// How many sites `seen stats` lists: those nearest their budget.
const NEAREST: usize = 10;

/// A store's sites, as `seen stats` tells them.
struct SitesHeld {
    by: String,
    sites: usize,
    /// The keys held that have a site.
    keys: u64,
    /// The sites holding the most keys, most first (equal counts by name).
    nearest: Vec<(String, u64)>,
}

/// The sites of a store that keeps budgets, nearest their budget first;
/// `None` for one that keeps none.
fn nearest_budget(store: &Store) -> Result<Option<SitesHeld>, Error> {
    let Some(by) = store.sites() else {
        return Ok(None);
    };
    let counts = store.site_counts()?;
    let names = store.site_names()?;
    let mut nearest: Vec<(String, u64)> = counts
        .iter()
        .map(|(site, &held)| {
            let name = names.get(site).map_or_else(
                || format!("(site {site:016x}, unnamed)"),
                |n| escape_str(&String::from_utf8_lossy(n)),
            );
            (name, held)
        })
        .collect();
    nearest.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    nearest.truncate(NEAREST);
    Ok(Some(SitesHeld {
        by: by.to_string(),
        sites: counts.len(),
        keys: counts.values().sum(),
        nearest,
    }))
}

impl SitesHeld {
    fn to_text(&self, budget: Option<u64>) -> String {
        let mut text = format!(
            "\n  sites: {} {}s holding keys; nearest their budget:",
            self.sites, self.by
        );
        for (name, held) in &self.nearest {
            let left = budget.map_or(String::new(), |b| {
                format!(", {} left", b.saturating_sub(*held))
            });
            text.push_str(&format!("\n    {name}: {held} keys{left}"));
        }
        text
    }

    fn to_json(&self, budget: Option<u64>) -> serde_json::Value {
        let nearest: Vec<_> = self
            .nearest
            .iter()
            .map(|(name, held)| {
                json!({"site": name, "keys": held, "left": budget.map(|b| b.saturating_sub(*held))})
            })
            .collect();
        json!({"by": self.by, "sites": self.sites, "keys": self.keys, "nearest": nearest})
    }
}

/// The keys by age, a line each: admitted in the last day, 1 to 7 days
/// ago, 7 to 30 days ago, before.
fn age_table(ages: &[u64]) -> String {
    let width = ages.iter().map(|n| n.to_string().len()).max().unwrap_or(1);
    let names = [
        "in the last day",
        "1 to 7 days ago",
        "7 to 30 days ago",
        "30 days ago or more",
    ];
    names
        .iter()
        .zip(ages)
        .map(|(name, n)| format!("    {n:>width$} admitted {name}\n"))
        .collect()
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

/// `seen add` and `seen forget`: the keys of the lines admitted to the
/// store, or with `forget`, forgotten.
/// Adds the keys of `args`' lines (as `add` asks), or forgets them.
fn keys_of_lines(args: &LinesArgs, clock: Clock, add: Option<&AddArgs>) -> Result<Outcome, Error> {
    let forget = add.is_none();
    // Forgetting rejects what adding rejects: the store holds no other key.
    let mut mapper = args.columns.mapper(&args.rung, Feeds::Frontier)?;
    let budget = add.and_then(|add| add.budget.budget());
    mapper.site = budget.map(|b| b.site);
    let request = SeenRequest {
        dir: &args.dir,
        config: Config::new(mapper.key_settings()),
        readonly: false,
        wait: args.wait,
        commit_every: Duration::from_secs(1),
        clock,
        forget,
        refuse_clock_back: args.now.refuse_clock_back(),
    };
    let command = if forget { "seen forget" } else { "seen add" };
    let extra = [
        ("command", json!(command)),
        ("rung", json!(args.rung.rung().name())),
    ];
    let job = Job {
        memory: Some(&args.memory),
        seen: Some(request),
        per_site_budget: budget,
        capped: add.and_then(|add| add.capped.as_deref()),
        ..Job::new(&mapper, Mode::Dedup(Emit::Nothing), &extra)
    };
    execute(&args.read, None, None, job)
}

fn expire(args: &ExpireArgs) -> Result<Outcome, Error> {
    let mut store = Store::open_existing(
        &args.dir.dir,
        Access::Write {
            wait: args.dir.wait,
        },
    )?;
    let before = args.now.clock().now().minus(args.older_than);
    let expired = store.expire(before)?;
    print_line(&format!(
        "seen store '{}': {} keys admitted before {} removed; it holds {} keys in {}",
        shown(&store),
        expired.forgotten,
        humantime::format_rfc3339_seconds(before.time()),
        store.keys(),
        counted(store.runs(), "run")
    ))?;
    Ok(Outcome::default())
}

fn backup(args: &BackupArgs) -> Result<Outcome, Error> {
    let store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    let copy = store.backup(&args.dest)?;
    print_line(&format!(
        "seen store '{}' copied to '{}' as of its commit {}: {} keys in {}, every checksum matches",
        shown(&store),
        escape_str(&args.dest.display().to_string()),
        copy.last_commit().0,
        copy.keys(),
        counted(copy.runs(), "run")
    ))?;
    Ok(Outcome::default())
}

fn export(args: &ExportArgs) -> Result<Outcome, Error> {
    let store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    let exported = store.export_history(&args.output)?;
    print_line(&format!(
        "seen store '{}' exported to '{}' as of its commit {}: {} keys in {} of Parquet ({} bytes, {:.1} a key)",
        shown(&store),
        escape_str(&args.output.display().to_string()),
        store.last_commit().0,
        exported.keys,
        counted(exported.files.len(), "file"),
        exported.bytes,
        exported.bytes as f64 / exported.keys.max(1) as f64
    ))?;
    Ok(Outcome::default())
}

fn import(args: &ImportArgs) -> Result<Outcome, Error> {
    let files = history_files(&args.histories)?;
    let recorded = history_config(&files)?;
    let access = Access::Write { wait: args.wait };
    let mut store = match (&recorded, Store::exists(&args.dir)) {
        (Some(config), _) => Store::open(&args.dir, config, access)?,
        (None, true) => {
            let store = Store::open_existing(&args.dir, access)?;
            let _ = writeln!(
                std::io::stderr(),
                "urinorm: note: the histories record no key configuration: their keys are taken as made with the store's ({})",
                store.config()
            );
            store
        }
        (None, false) => {
            return Err(Error::Usage(format!(
                "there is no seen store at '{}', and the histories record no key configuration to make one with: import them into the store whose keys they are",
                escape_str(&args.dir.display().to_string())
            )));
        }
    };
    store.set_clock(args.now.clock());
    let imported = store.import_history(&files)?;
    let untimed = match imported.untimed {
        0 => String::new(),
        n => format!(" ({n} rows without a time admitted at this import's)"),
    };
    print_line(&format!(
        "seen store '{}': {} rows read from {}, {} keys admitted{untimed}, {} renewed with a later time, {} held already; it holds {} keys in {}",
        shown(&store),
        imported.rows,
        counted(files.len(), "file"),
        imported.admitted,
        imported.renewed,
        imported.held,
        store.keys(),
        counted(store.runs(), "run")
    ))?;
    Ok(Outcome::default())
}

fn salvage(args: &DirArgs) -> Result<Outcome, Error> {
    let salvaged = Store::salvage(&args.dir, args.wait)?;
    let store = Store::open_existing(&args.dir, Access::ReadOnly)?;
    store.verify()?;
    let mut err = std::io::stderr().lock();
    for damage in &salvaged.damage {
        let _ = writeln!(err, "urinorm: found: {}", escape_str(damage));
    }
    for run in &salvaged.damaged_runs {
        let _ = writeln!(
            err,
            "urinorm: run {}: {} entries kept, {} lost",
            escape_str(&run.file),
            run.kept,
            run.lost
        );
    }
    let lost = match (salvaged.entries_lost, salvaged.runs_lost) {
        (0, _) if salvaged.damage.is_empty() => "nothing was damaged, every key kept".to_string(),
        (0, _) => "every key kept".to_string(),
        (entries, 0) => format!(
            "{entries} entries lost in {}",
            counted(salvaged.blocks_lost as usize, "damaged block")
        ),
        (entries, runs) => format!(
            "{entries} entries lost in {} and {}",
            counted(salvaged.blocks_lost as usize, "damaged block"),
            counted(runs as usize, "unreadable run")
        ),
    };
    print_line(&format!(
        "seen store '{}': salvaged, {lost}; it holds {} keys (it counted {}) in {}, and verifies",
        shown(&store),
        store.keys(),
        salvaged.keys_before,
        counted(store.runs(), "run")
    ))?;
    Ok(Outcome::default())
}

fn compact(args: &DirArgs) -> Result<Outcome, Error> {
    let mut store = Store::open_existing(&args.dir, Access::Write { wait: args.wait })?;
    let before = store.runs();
    store.compact()?;
    let done = match before {
        0 | 1 => format!("in {}, nothing to merge", counted(before, "run")),
        _ => format!("{} merged into {}", counted(before, "run"), store.runs()),
    };
    print_line(&format!(
        "seen store '{}': {} keys, {done}",
        shown(&store),
        store.keys()
    ))?;
    Ok(Outcome::default())
}
