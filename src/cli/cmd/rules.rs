//! `urinorm rules learn`: site rules learned from a crawl index, with
//! their evidence, and how they do on a share held out.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, Subcommand};
use urinorm::escape::escape_str;
use urinorm::line::crawl_index::IndexLines;
use urinorm::normalize::protocol::{PRESETS, Preset};
use urinorm::pipeline::MAX_LINE_BYTES;
use urinorm::pipeline::output::Output;
use urinorm::report::learn::{self, LearnOptions, Learning, Trial};
use urinorm::rules::learn::Support;

use crate::cli::args::{IndexArgs, LineArgs};
use crate::cli::engine::{MemoryArgs, directory_of, path_error, sweep_leftovers};
use crate::cli::progress::Bar;
use crate::cli::{Error, Outcome, thread_count, write_whole};

#[derive(Args, Debug)]
pub struct RulesCommandArgs {
    #[command(subcommand)]
    pub command: RulesCommand,
}

#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// Propose per-host rules from a crawl index: query parameters a site
    /// ignores, path aliases, case-insensitive paths, each merging only
    /// URLs that served one content.
    Learn(LearnArgs),
}

#[derive(Args, Debug)]
pub struct LearnArgs {
    /// Index files (CDX, CDXJ, or lines with a digest column); none or `-`
    /// reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub line: LineArgs,
    #[command(flatten)]
    pub index: IndexArgs,
    /// The step the rules are learned over (and are to be applied with).
    #[arg(long, value_name = "PRESET", default_value = "aggressive")]
    pub preset: Preset,
    /// A rule must merge at least this many URLs...
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub min_urls: usize,
    /// ...over at least this many distinct values (a path rule: pairs of
    /// URLs merged, each without a conflict).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub min_values: usize,
    /// Learn from all contents but this share (0 to 1), and judge the
    /// rules on that share.
    #[arg(long, value_name = "FRACTION")]
    pub holdout: Option<f64>,
    /// Write the rules to FILE (whole or not at all) instead of standard
    /// output; the summary then goes to standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The first line of each input is a header: leave it out.
    #[arg(long)]
    pub header: bool,
    /// Reject lines longer than this many bytes.
    #[arg(long, value_name = "N", default_value_t = MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    // The captures are spilled to disk by host, and the hosts learned from
    // a part at a time within --memory-limit (one host's URLs together).
    #[command(flatten)]
    pub memory: MemoryArgs,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: &RulesCommandArgs) -> Result<Outcome, Error> {
    match &args.command {
        RulesCommand::Learn(learn) => run_learn(learn),
    }
}

fn run_learn(args: &LearnArgs) -> Result<Outcome, Error> {
    if args.holdout.is_some_and(|f| !(f > 0.0 && f < 1.0)) {
        return Err(Error::Usage(
            "--holdout takes a fraction above 0 and below 1".into(),
        ));
    }
    let mut columns = args.line.columns()?;
    let format = args.index.format(&mut columns)?.ok_or_else(|| {
        Error::Usage(
            "rules learn reads a crawl index: give --cdx, --cdxj or --digest-field N".into(),
        )
    })?;
    let preset = PRESETS
        .iter()
        .find(|p| **p == args.preset)
        .expect("a preset is one of PRESETS");
    let temp_dir = args.memory.temp_dir();
    sweep_leftovers(
        args.output
            .as_deref()
            .map(directory_of)
            .into_iter()
            .chain([temp_dir.clone()]),
        args.quiet,
    );
    Output::check_dir(&temp_dir).map_err(|source| path_error(&temp_dir, source))?;
    let inputs = args.index.open(&args.files)?;
    let options = LearnOptions {
        lines: IndexLines::new(columns, Some(format), inputs.len()),
        preset,
        support: Support {
            min_urls: args.min_urls,
            min_values: args.min_values,
        },
        holdout: args.holdout,
        threads: thread_count(args.threads)?,
        max_line_bytes: args.max_line_bytes,
        header: args.header,
        memory_limit: args.memory.limit(),
        temp_dir,
    };
    let learning = learn::run(&inputs, &options, &Bar::new(&inputs, !args.quiet, false))?;
    args.index
        .refuse_no_captures(learning.captures + learning.rejected, learning.not_content)?;
    let summary = summary(&learning, &options);
    match &args.output {
        Some(path) => {
            write_whole(path, &learning.text)?;
            io::stdout()
                .lock()
                .write_all(summary.as_bytes())
                .map_err(Error::stdout)?;
        }
        None => {
            io::stdout()
                .lock()
                .write_all(learning.text.as_bytes())
                .map_err(Error::stdout)?;
            let _ = io::stderr().lock().write_all(summary.as_bytes());
        }
    }
    Ok(Outcome {
        rejected: learning.rejected,
        ..Outcome::default()
    })
}

/// What was read, the rules, and how they did on the held-out share.
fn summary(learning: &Learning, options: &LearnOptions) -> String {
    let mut text = format!(
        "rules learn: {} lines: {} captures of content, {}{} other lines, {} rejected; \
         {} URLs in {} contents (forms of --preset {})\n",
        learning.lines,
        learning.captures,
        super::ladder::redirects_joined(learning.redirects, |n| n.to_string(), ", "),
        learning.not_content,
        learning.rejected,
        learning.urls,
        learning.contents,
        options.preset.name
    );
    text += &format!(
        "{} rules (at least {} URLs merged over {} values, or pairs for a path rule, no conflict):\n",
        learning.rules.len(),
        options.support.min_urls,
        options.support.min_values
    );
    for rule in &learning.rules {
        let line = rule.lines(false);
        let rule_line = line.lines().nth(1).unwrap_or_default();
        // Hosts and names come from the input: shown escaped.
        text += &format!(
            "  {:<50} {:>6} URLs {:>6} fewer {:>5} {}\n",
            escape_str(rule_line),
            rule.urls,
            rule.merges,
            rule.support,
            rule.support_unit()
        );
    }
    if let Some(trial) = &learning.held_out {
        text += &trial_text(trial, options.holdout.unwrap_or_default());
    }
    text
}

fn trial_text(trial: &Trial, share: f64) -> String {
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.4}"));
    format!(
        "held out {:.0}% of the contents ({} URLs), not learned from: the rules merge {} \
         pairs of URLs, {} of one content and {} not (precision {}); they join {} of the \
         {} pairs that are one content (recall {}, 0 without them)\n",
        share * 100.0,
        trial.urls,
        trial.merged_pairs,
        trial.right_pairs,
        trial.merged_pairs - trial.right_pairs,
        ratio(trial.precision()),
        trial.right_pairs,
        trial.same_pairs,
        ratio(trial.recall())
    )
}
