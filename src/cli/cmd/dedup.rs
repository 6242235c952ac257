//! `urinorm dedup`: each equivalence class once, in first-occurrence order,
//! less what a seen store admitted before.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;
use urinorm::line::NormalizeLines;
use urinorm::line::key::Site;
use urinorm::pipeline::{Emit, Mode};
use urinorm::store::{Clock, Config, Stamp};

use crate::cli::args::{BudgetArgs, ColumnArgs, Feeds, RungArgs};
use crate::cli::engine::{Job, MemoryArgs, RunArgs, SeenRequest, clock_at, execute, parse_now};
use crate::cli::{Error, Outcome};

#[derive(Args, Debug)]
pub struct DedupArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// What to write for each class: its canonical form, its first original
    /// line (what a crawler frontier fetches), or `N<TAB>canonical`.
    #[arg(long, value_enum, default_value_t = Emit::Canonical)]
    pub emit: Emit,
    /// Write the classes in byte order of their keys (as `LC_ALL=C sort -u`
    /// does; with --key surt, a CDX-style SURT-sorted list), once all input
    /// is read. Past --memory-limit it sorts on disk, the output the same.
    #[arg(long, conflicts_with = "line_buffered")]
    pub sort: bool,
    #[command(flatten)]
    pub caps: CapArgs,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Write each duplicate line to FILE as `file:line<TAB>file:first<TAB>raw`,
    /// `first` the line its class first occurred on (keeps a table of
    /// every class's first line in memory, about 100 bytes a class at its peak, beside
    /// --memory-limit).
    #[arg(long, value_name = "FILE")]
    pub dupes: Option<PathBuf>,
    #[command(flatten)]
    pub seen: SeenArgs,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// A frontier's budget: so many distinct URIs per site.
#[derive(Args, Debug)]
pub struct CapArgs {
    /// Write the lines held back by the cap to FILE, one per class past its
    /// site's cap, as they were read (past --memory-limit, a spilled
    /// class's as --emit writes it), for the next batch to take.
    #[arg(long, value_name = "FILE")]
    pub capped: Option<PathBuf>,
    /// Keep the first N distinct URIs of each host, in input order; the
    /// others are counted as capped (a URI with no host is never capped).
    /// With --seen, URIs the store holds use none of the budget.
    #[arg(long, value_name = "N", conflicts_with = "max_per_domain")]
    pub max_per_host: Option<u64>,
    /// Keep the first N distinct URIs of each registrable domain (Public
    /// Suffix List), in input order.
    #[arg(long, value_name = "N")]
    pub max_per_domain: Option<u64>,
}

impl CapArgs {
    /// The site caps count by, and the cap.
    fn cap(&self) -> Option<(Site, u64)> {
        match (self.max_per_host, self.max_per_domain) {
            (Some(n), _) => Some((Site::Host, n)),
            (_, Some(n)) => Some((Site::Domain, n)),
            (None, None) => None,
        }
    }
}

/// A persistent seen store across runs (a crawler frontier's batches).
#[derive(Args, Debug)]
pub struct SeenArgs {
    /// Leave out the keys earlier runs admitted to the seen store in DIR
    /// (made if missing; their lines count as seen), and admit this run's
    /// new keys once its output is complete.
    #[arg(long, value_name = "DIR")]
    pub seen: Option<PathBuf>,
    /// With --seen: check against the store, admit nothing.
    #[arg(long, requires = "seen")]
    pub seen_readonly: bool,
    /// With --seen: when another run is writing the store, wait for it
    /// instead of failing.
    #[arg(long, requires = "seen", conflicts_with = "seen_readonly")]
    pub seen_wait: bool,
    /// With --seen and --line-buffered, writing to standard output: commit
    /// the keys written at least this often (default 1s; 250ms, 5m); a
    /// kill loses at most that much. Any other run commits once, when its
    /// output is complete.
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration, requires = "seen")]
    pub commit_every: Option<std::time::Duration>,
    /// With --seen: a key admitted longer ago than this (e.g. 7d, 12h)
    /// counts as not held: its line is written (a recrawl, counted as
    /// expired) and the key admitted again with this run's time.
    #[arg(long, value_name = "DURATION", value_parser = urinorm::store::parse_duration, requires = "seen")]
    pub seen_max_age: Option<std::time::Duration>,
    /// With --seen: take this time as now (RFC 3339, UTC:
    /// 2026-11-25T00:00:00Z) rather than the clock's, for what is admitted
    /// and for ages (replays and tests).
    #[arg(long, value_name = "TIME", value_parser = parse_now, requires = "seen")]
    pub now: Option<Stamp>,
    /// Take a --now earlier than the store's last commit (a replay of old
    /// batches on purpose); without it, that is refused.
    #[arg(long, requires = "now")]
    pub replay: bool,
}

/// How often a live run commits unless told.
const COMMIT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl SeenArgs {
    /// The store these flags ask for, for keys `mapper` makes.
    pub(crate) fn request(&self, mapper: &NormalizeLines) -> Option<SeenRequest<'_>> {
        self.seen.as_deref().map(|dir| SeenRequest {
            dir,
            config: Config::new(mapper.key_settings()),
            readonly: self.seen_readonly,
            wait: self.seen_wait,
            commit_every: self.commit_every.unwrap_or(COMMIT_EVERY),
            clock: self.clock(),
            forget: false,
            refuse_clock_back: self.now.is_some() && !self.replay,
        })
    }

    /// The run's time, and the maximum age of a key held.
    pub(crate) fn clock(&self) -> Clock {
        let clock = clock_at(self.now);
        self.seen_max_age
            .map_or(clock, |age| clock.with_max_age(age))
    }
}

pub fn run(args: &DedupArgs) -> Result<Outcome, Error> {
    if args.sort && args.emit == Emit::Verdict {
        return Err(Error::Usage(
            "--sort cannot apply to --emit verdict, whose lines follow the input's".into(),
        ));
    }
    let feeds = match args.seen.seen {
        Some(_) => Feeds::Frontier,
        None => Feeds::Output,
    };
    let commits_as_it_goes = args.run.line_buffered && args.run.output_path().is_none();
    if args.seen.commit_every.is_some() && !commits_as_it_goes {
        return Err(Error::Usage(
            "--commit-every applies to a run that commits as it goes (--line-buffered, writing to standard output); this one commits once, when its output is complete".into(),
        ));
    }
    let mut mapper = args.columns.mapper(&args.rung, feeds)?;
    let cap = args.caps.cap();
    let budget = args.budget.budget();
    if args.caps.capped.is_some() && cap.is_none() && budget.is_none() {
        return Err(Error::Usage(
            "--capped writes the lines a cap or a budget holds back: give --max-per-host, --max-per-domain, --budget-per-host or --budget-per-domain"
                .into(),
        ));
    }
    if budget.is_some() && (args.seen.seen.is_none() || args.seen.seen_readonly) {
        return Err(Error::Usage(
            "a per-site budget is kept in the seen store: give --seen DIR (not --seen-readonly)"
                .into(),
        ));
    }
    mapper.site = counted_site(cap.map(|(site, _)| site), budget.map(|b| b.site))?;
    let extra = [
        ("command", json!("dedup")),
        ("rung", json!(args.rung.rung().name())),
        ("emit", json!(args.emit.name())),
    ];
    let job = Job {
        per_site_cap: cap.map(|(_, n)| n),
        per_site_budget: budget,
        memory: Some(&args.memory),
        seen: args.seen.request(&mapper),
        line_buffered: args.run.line_buffered,
        sort: args.sort,
        capped: args.caps.capped.as_deref(),
        dupes: args.dupes.as_deref(),
        ..Job::new(&mapper, Mode::Dedup(args.emit), &extra)
    };
    execute(
        &args.run.read,
        args.run.output_path(),
        args.run.compression()?,
        job,
    )
}

/// The one site a run's cap and budget count by: a run counts sites one way.
pub(crate) fn counted_site(cap: Option<Site>, budget: Option<Site>) -> Result<Option<Site>, Error> {
    match (cap, budget) {
        (Some(cap), Some(budget)) if cap != budget => Err(Error::Usage(format!(
            "a run counts sites one way: its cap is per {} and its budget per {}",
            cap.name(),
            budget.name()
        ))),
        (cap, budget) => Ok(cap.or(budget)),
    }
}
