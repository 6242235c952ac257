//! `urinorm ladder`: choose a rung on evidence, from the user's own lines.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use urinorm::escape::escape_str;
use urinorm::normalize::protocol::{PRESETS, Preset, Transform};
use urinorm::pipeline::MAX_LINE_BYTES;
use urinorm::report::ladder::json::{JsonEvidence, JsonReport, JsonStep, RunFacts};
use urinorm::report::ladder::{self, Capture, EvidenceSummary, Merge, Options, PresetStep};

use super::ladder_page;
use crate::cli::args::{IndexArgs, LineArgs, RulesArgs, needs_host};
use crate::cli::progress::Bar;
use crate::cli::{Error, Outcome, thread_count, write_whole};

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
    /// Add one step beside the ladder: the scheme rung plus this preset's
    /// transforms (ia: the Internet Archive's), counted as `dedup --preset`
    /// counts them. A preset the ladder shows adds nothing, but with
    /// --rules it is what the rules are measured over (`--preset safe`:
    /// step protocol:safe+rules).
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<Preset>,
    /// Look only at the hosts whose hash falls in this fraction (0 to 1):
    /// a quick estimate that keeps each site's spellings together (a line
    /// without a host is sampled by its own hash).
    #[arg(long, value_name = "FRACTION")]
    pub sample: Option<f64>,
    /// How many of the hosts with most lines to name.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top_hosts: usize,
    /// With a crawl index: the false merges (keys holding pages that
    /// differ) the recommended step may make. The step recommended is the
    /// one with the most right merges within it.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub max_false_merges: u64,
    /// Site rules: one more step, the last one's plus every rule, and each
    /// file's merges on its own.
    #[command(flatten)]
    pub rules: RulesArgs,
    /// A crawl index: judge each step's merges by its content digests.
    #[command(flatten)]
    pub index: IndexArgs,
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
    let mut columns = args.line.columns()?;
    let index = args.index.format(&mut columns)?;
    let inputs = args.index.open(&args.files)?;
    let preset = args.preset.map(|named| {
        PRESETS
            .iter()
            .find(|p| **p == named)
            .expect("a preset is one of PRESETS")
    });
    // A ladder preset named alone adds nothing; with rules, it is what the
    // rules are measured over.
    let rules = args.rules.each_file()?;
    if let Some(shown) = preset.filter(|p| p.ladder && rules.is_none()) {
        let _ = writeln!(
            io::stderr(),
            "urinorm: --preset {0}: the ladder shows it already (step protocol:{0}); no step added",
            shown.name
        );
    }
    let options = Options {
        examples: args.examples,
        sample: args.sample,
        with: args.with,
        preset: preset.map(|preset| PresetStep {
            preset,
            fetchable: needs_host(preset),
        }),
        threads: thread_count(args.threads)?,
        columns,
        max_line_bytes: args.max_line_bytes,
        header: args.header,
        top_hosts: args.top_hosts,
        rules,
        index,
        max_false_merges: args.max_false_merges,
    };
    let report = ladder::run(&inputs, &options, &Bar::new(&inputs, !args.quiet, false))?;
    if let Some(held) = &report.evidence {
        args.index
            .refuse_no_captures(held.captures + held.rejected, held.not_content)?;
    }
    let run = RunFacts::new(
        // The program as `urinorm`, wherever it was run from.
        ["urinorm".to_string()]
            .into_iter()
            .chain(std::env::args().skip(1))
            .collect(),
        inputs.iter().map(|i| i.name().to_string()).collect(),
        options.threads,
    );
    let json = JsonReport::new(&report, run);
    let to_stdout = |text: String| {
        io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::stdout)
    };
    match &args.html {
        Some(path) if path == Path::new("-") => to_stdout(ladder_page::page(&json))?,
        Some(path) => {
            write_whole(path, &ladder_page::page(&json))?;
            to_stdout(table(&json))?;
        }
        None if args.json => to_stdout(format!("{:#}\n", json.to_value()))?,
        None => to_stdout(table(&json))?,
    }
    Ok(Outcome {
        rejected: report.steps[0].rejected,
        ..Outcome::default()
    })
}

/// The report as a table for an 80-column terminal.
pub fn table(report: &JsonReport) -> String {
    let mut text = String::new();
    if let Some(fraction) = report.sample {
        text += &format!("ESTIMATE from a {:.1}% sample of hosts\n", fraction * 100.0);
    }
    text += &format!("{}\n\n", ladder_page::lines_read(report));
    for line in wrapped(&ladder_page::recommendation(report), 80) {
        text += &format!("{line}\n");
    }
    text += "\n";
    text += "step                    distinct  collapsed       %  rejected   time s\n";
    for step in &report.steps {
        let percent = 100.0 * step.collapsed as f64 / report.lines.max(1) as f64;
        text += &format!(
            "{:<22} {:>9} {:>10} {:>6.2}% {:>9} {:>8.2}\n",
            step.name, step.distinct, step.collapsed, percent, step.rejected, step.seconds
        );
    }
    // A step beside the ladder is not compared with the row above it.
    for (i, step) in report.steps.iter().enumerate().skip(1) {
        if let Some(over) = step
            .over
            .as_ref()
            .filter(|&o| *o != report.steps[i - 1].name)
        {
            text += &format!(
                "({} is beside the ladder: collapsed over {over})\n",
                step.name
            );
        }
    }
    for step in report.steps.iter().filter(|s| !s.examples.is_empty()) {
        text += &format!("\nLargest merges new at {}:\n", step.name);
        text += &merges_text(&step.examples);
    }
    if let Some(summary) = &report.evidence {
        text += &evidence_text(report, summary);
    }
    text += "\nEach transform alone, over the scheme rung (distinct keys fewer), and its\n\
             risk of a false merge:\n";
    for row in &report.attribution {
        let mut risk = wrapped(&row.risk, 80 - 36).into_iter();
        text += &format!(
            "  {:<22} {:>9}  {}\n",
            row.transform,
            row.merges,
            risk.next().unwrap_or_default()
        );
        for more in risk {
            text += &format!("{:36}{more}\n", "");
        }
    }
    for row in report.attribution.iter().filter(|r| !r.examples.is_empty()) {
        text += &format!(
            "\nLargest merges of {} alone, over the scheme rung:\n",
            row.transform
        );
        text += &merges_text(&row.examples);
    }
    if !report.rules_attribution.is_empty() {
        text += "\nEach rules file alone, over the scheme rung (distinct keys fewer):\n";
        for row in &report.rules_attribution {
            text += &format!("  {:<22} {:>9}\n", escape_str(&row.rules), row.merges);
        }
    }
    text += &format!(
        "\n{} distinct hosts, {} distinct registrable domains (Public Suffix List)\n",
        report.hosts, report.domains
    );
    if !report.top_hosts.is_empty() {
        text += "Hosts with most lines:\n";
        for host in &report.top_hosts {
            // Hosts come from the input: shown escaped.
            text += &format!("  {:>9}  {}\n", host.lines, escape_str(&host.host));
        }
    }
    text += &format!("\n({:.2} s in all)\n", report.seconds);
    text
}

/// The redirects that joined their target's content, as a summary of what
/// was read says them, counted by `count`, followed by `then`; nothing
/// where there were none.
pub(super) fn redirects_joined(redirects: u64, count: fn(u64) -> String, then: &str) -> String {
    match redirects {
        0 => String::new(),
        1 => format!("1 redirect joined to its target's content{then}"),
        n => format!(
            "{} redirects joined to their target's content{then}",
            count(n)
        ),
    }
}

/// What the digests say of each step and transform, with examples of the
/// false merges new at each step and of what the last step still misses.
fn evidence_text(report: &JsonReport, summary: &EvidenceSummary) -> String {
    let intro = format!(
        "Judged by content digests: {} captures of content (2xx or revisit; {}{} other \
         lines left out, {} rejected) of {} URLs in {} contents ({} URLs served several \
         digests). Precision: of the pairs of URLs a step merges, those that are one \
         content; recall: of the pairs that are one content, those it merges. A false \
         merge is a key holding pages that differ; a missed one, a content under \
         several keys.",
        summary.captures,
        redirects_joined(summary.redirects, |n| n.to_string(), "; "),
        summary.not_content,
        summary.rejected,
        summary.urls,
        summary.contents,
        summary.changing,
    );
    let mut text = format!("\n{}\n\n", wrapped(&intro, 79).join("\n"));
    text += "step                  precision  recall   false    lines  missed extra keys\n";
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.4}"));
    for (step, e) in report.steps.iter().filter_map(judged) {
        let c = &e.counts;
        text += &format!(
            "{:<21} {:>9} {:>7} {:>7} {:>8} {:>7} {:>10}\n",
            step.name,
            ratio(e.precision),
            ratio(e.recall),
            c.false_merges,
            c.false_lines,
            c.missed,
            c.missed_keys
        );
    }
    let by_name = |name: &str| report.steps.iter().find(|s| s.name == name);
    for (step, e) in report.steps.iter().filter_map(judged) {
        if ladder_page::shows_false_examples(report, step, e) {
            text += &format!(
                "\nLargest false merges at {} (pages that differ, one key):\n",
                step.name
            );
            for m in &e.false_examples {
                text += &format!("  {} lines, {} contents:\n", m.lines, m.contents);
                text += &captures_text(&m.captures);
            }
        }
    }
    // What even the last step of the ladder leaves apart (a step beside
    // the ladder is not its last).
    let on_ladder = report
        .steps
        .iter()
        .enumerate()
        .filter(|&(i, s)| i == 0 || s.over.as_ref() == Some(&report.steps[i - 1].name))
        .map(|(_, s)| s);
    if let Some((step, e)) = on_ladder.filter_map(judged).next_back()
        && !e.missed_examples.is_empty()
    {
        text += &format!(
            "\nLargest missed merges at {} (one content, several keys):\n",
            step.name
        );
        for m in &e.missed_examples {
            text += &format!("  {} keys{}:\n", m.keys, ladder_page::error_page_note(m));
            text += &captures_text(&m.captures);
        }
    }
    let scheme = by_name("scheme").and_then(|s| s.evidence.as_ref());
    if let Some(scheme) = scheme.map(|e| &e.counts) {
        text += "\nEach transform alone over the scheme rung, judged by digests: the pairs of\n\
                 URLs it joins beyond the scheme rung that are one content, that are not,\n\
                 and its precision:\n";
        for row in &report.attribution {
            let Some(c) = row.evidence.as_ref().map(|e| &e.counts) else {
                continue;
            };
            let merged = c.merged_pairs as i64 - scheme.merged_pairs as i64;
            let right = c.right_pairs as i64 - scheme.right_pairs as i64;
            let precision = (merged > 0).then(|| right as f64 / merged as f64);
            text += &format!(
                "  {:<22} {:>9} {:>9} {:>9}\n",
                row.transform,
                right,
                merged - right,
                ratio(precision)
            );
        }
    }
    text
}

/// A step with its judgement by digests, if it has one.
fn judged(step: &JsonStep) -> Option<(&JsonStep, &JsonEvidence)> {
    step.evidence.as_ref().map(|e| (step, e))
}

/// Captures as the table shows them: spelling, digest, and how many
/// digests the URL served when more than one.
fn captures_text(captures: &[Capture]) -> String {
    let mut text = String::new();
    for c in captures {
        // Spellings and digests come from the input: shown escaped.
        text += &format!(
            "      {}  {}",
            escape_str(&c.spelling),
            escape_str(&c.served())
        );
        if c.digests > 1 {
            text += &format!(" (of {} digests)", c.digests);
        }
        text += "\n";
    }
    text
}

/// Merges as the table shows them: size and key, the spellings, what
/// joined them.
fn merges_text(merges: &[Merge]) -> String {
    let mut text = String::new();
    for merge in merges {
        // Spellings come from the input: shown escaped.
        text += &format!("  {} lines -> {}\n", merge.size, escape_str(&merge.key));
        for spelling in &merge.spellings {
            text += &format!("      {}\n", escape_str(spelling));
        }
        for reason in &merge.joined_by {
            text += &format!("    by: {}\n", escape_str(reason));
        }
    }
    text
}

/// `text` in lines of at most `width` characters, broken at spaces (a
/// longer word is a line of its own).
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}
