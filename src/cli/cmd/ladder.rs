//! `urinorm ladder`: choose a rung on evidence, from the user's own lines.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;
use urinorm::escape::escape_str;
use urinorm::ladder_report::{self, Options, Report};
use urinorm::normalize::protocol::Transform;
use urinorm::pipeline::MAX_LINE_BYTES;
use urinorm::pipeline::output::Output;

use super::ladder_page;
use super::normalize::{LineArgs, RulesArgs};
use crate::cli::progress::Bar;
use crate::cli::{Error, Outcome, open_inputs, thread_count};

#[derive(Args, Debug)]
pub struct LadderArgs {
    /// Files of URIs, one per line; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    #[command(flatten)]
    pub line: LineArgs,
    /// Reject lines longer than this many bytes (never truncate them).
    #[arg(long, value_name = "N", default_value_t = MAX_LINE_BYTES)]
    pub max_line_bytes: usize,
    /// The first line of each input is a header: leave it out.
    #[arg(long)]
    pub header: bool,
    /// Write the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write the report as one self-contained HTML page (charts, the
    /// example merges with what differs marked, the run's facts) to FILE;
    /// `-` writes it to standard output instead of the table.
    #[arg(long, value_name = "FILE", conflicts_with = "json")]
    pub html: Option<PathBuf>,
    /// How many example merges to show per step.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub examples: usize,
    /// Add one step: the aggressive preset plus this transform.
    #[arg(long = "with", value_name = "TRANSFORM")]
    pub with: Option<Transform>,
    /// Look only at the hosts whose hash falls in this fraction (0 to 1):
    /// a quick estimate that keeps each site's spellings together.
    #[arg(long, value_name = "FRACTION")]
    pub sample: Option<f64>,
    /// How many of the hosts with most lines to name.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top_hosts: usize,
    /// Site rules: one more step, the last one's plus every rule, and each
    /// file's merges on its own.
    #[command(flatten)]
    pub rules: RulesArgs,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: &LadderArgs) -> Result<Outcome, Error> {
    if args.sample.is_some_and(|f| !(f > 0.0 && f <= 1.0)) {
        return Err(Error::Usage(
            "--sample takes a fraction above 0 and at most 1".into(),
        ));
    }
    let columns = args.line.columns()?;
    let inputs = open_inputs(&args.files)?;
    let options = Options {
        examples: args.examples,
        sample: args.sample,
        with: args.with,
        threads: thread_count(args.threads)?,
        columns,
        max_line_bytes: args.max_line_bytes,
        header: args.header,
        top_hosts: args.top_hosts,
        rules: args.rules.each_file()?,
    };
    let report = ladder_report::run(&inputs, &options, &Bar::new(&inputs, !args.quiet, false))?;
    let run = RunFacts {
        // The program as `urinorm`, wherever it was run from.
        command: ["urinorm".to_string()]
            .into_iter()
            .chain(std::env::args().skip(1))
            .collect(),
        inputs: inputs.iter().map(|i| i.name().to_string()).collect(),
        threads: options.threads,
    };
    let json = to_json(&report, &run);
    let to_stdout = |text: String| {
        io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::stdout)
    };
    match &args.html {
        Some(path) if path == Path::new("-") => to_stdout(ladder_page::page(&json))?,
        Some(path) => {
            write_page(path, &ladder_page::page(&json))?;
            to_stdout(table(&report))?;
        }
        None if args.json => to_stdout(format!("{json:#}\n"))?,
        None => to_stdout(table(&report))?,
    }
    Ok(Outcome {
        rejected: report.steps[0].rejected,
        ..Outcome::default()
    })
}

/// What the report does not hold about its run: enough, with it, to run it again.
pub struct RunFacts {
    /// The command line.
    pub command: Vec<String>,
    /// The inputs' names, as given (`-` for standard input).
    pub inputs: Vec<String>,
    pub threads: usize,
}

/// Writes the page to `path` whole or not at all (a temporary file beside
/// it, synced, then renamed).
fn write_page(path: &Path, page: &str) -> Result<(), Error> {
    let failed = |source| Error::Output {
        name: path.display().to_string(),
        source,
    };
    let mut output = Output::create(Some(path), None).map_err(failed)?;
    output.writer().write_all(page.as_bytes()).map_err(failed)?;
    output.finish().map_err(failed)
}

/// The report as a table for an 80-column terminal.
pub fn table(report: &Report) -> String {
    let mut text = String::new();
    if let Some(fraction) = report.sample {
        text += &format!("ESTIMATE from a {:.1}% sample of hosts\n", fraction * 100.0);
    }
    text += &format!(
        "{} lines ({} blank skipped)\n\n",
        report.lines, report.blank
    );
    text += "step                    distinct  collapsed       %  rejected   time s\n";
    for step in &report.steps {
        let percent = 100.0 * step.collapsed as f64 / report.lines.max(1) as f64;
        text += &format!(
            "{:<22} {:>9} {:>10} {:>6.2}% {:>9} {:>8.2}\n",
            step.name, step.distinct, step.collapsed, percent, step.rejected, step.seconds
        );
    }
    for step in report.steps.iter().filter(|s| !s.examples.is_empty()) {
        text += &format!("\nLargest merges new at {}:\n", step.name);
        for merge in &step.examples {
            // Spellings come from the input: shown escaped.
            text += &format!("  {} lines -> {}\n", merge.size, escape_str(&merge.key));
            for spelling in &merge.spellings {
                text += &format!("      {}\n", escape_str(spelling));
            }
            for reason in &merge.joined_by {
                text += &format!("    by: {}\n", escape_str(reason));
            }
        }
    }
    text += "\nEach transform alone, over the scheme rung (distinct keys fewer):\n";
    for (transform, merges) in &report.attribution {
        text += &format!("  {:<22} {:>9}\n", transform.name(), merges);
    }
    if !report.rules_attribution.is_empty() {
        text += "\nEach rules file alone, over the scheme rung (distinct keys fewer):\n";
        for (file, merges) in &report.rules_attribution {
            text += &format!("  {:<22} {:>9}\n", escape_str(file), merges);
        }
    }
    text += &format!(
        "\n{} distinct hosts, {} distinct registrable domains (Public Suffix List)\n",
        report.hosts, report.domains
    );
    if !report.top_hosts.is_empty() {
        text += "Hosts with most lines:\n";
        for (host, lines) in &report.top_hosts {
            // Hosts come from the input: shown escaped.
            text += &format!("  {:>9}  {}\n", lines, escape_str(host));
        }
    }
    text += &format!("\n({:.2} s in all)\n", report.seconds);
    text
}

/// The report as JSON, with the facts of its run.
pub fn to_json(report: &Report, run: &RunFacts) -> serde_json::Value {
    let steps: Vec<_> = report
        .steps
        .iter()
        .map(|s| {
            let examples: Vec<_> = s
                .examples
                .iter()
                .map(|m| json!({"size": m.size, "key": m.key, "spellings": m.spellings, "joined_by": m.joined_by}))
                .collect();
            json!({
                "name": s.name,
                "distinct": s.distinct,
                "collapsed": s.collapsed,
                "rejected": s.rejected,
                "seconds": s.seconds,
                "examples": examples,
            })
        })
        .collect();
    let attribution: Vec<_> = report
        .attribution
        .iter()
        .map(|(t, merges)| json!({"transform": t.name(), "merges": merges}))
        .collect();
    let rules_attribution: Vec<_> = report
        .rules_attribution
        .iter()
        .map(|(file, merges)| json!({"rules": file, "merges": merges}))
        .collect();
    let top_hosts: Vec<_> = report
        .top_hosts
        .iter()
        .map(|(host, lines)| json!({"host": host, "lines": lines}))
        .collect();
    json!({
        "lines": report.lines,
        "blank": report.blank,
        "estimate": report.sample.is_some(),
        "sample": report.sample,
        "steps": steps,
        "rejected_by_reason": report
            .rejected_by_reason
            .iter()
            .map(|(reason, lines)| json!({"reason": reason, "lines": lines}))
            .collect::<Vec<_>>(),
        "attribution": attribution,
        "rules_attribution": rules_attribution,
        "hosts": report.hosts,
        "domains": report.domains,
        "top_hosts": top_hosts,
        "seconds": report.seconds,
        "run": {
            "version": env!("CARGO_PKG_VERSION"),
            "command": run.command,
            "inputs": run.inputs,
            "threads": run.threads,
        },
    })
}
