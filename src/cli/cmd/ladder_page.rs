//! `ladder --html`: the report as one self-contained page (inline CSS and
//! SVG; no script, no font or file from elsewhere), drawn from the typed
//! JSON report ([`JsonReport`]), so the page and `--json` give the same
//! numbers from one source.
//!
//! Every string from the input or the command line is escaped twice: for a
//! reader's eye first (control and hiding characters as `\xNN`, as in every
//! diagnostic), then for HTML (`&`, `<`, `>`, `"`, `'`), so no byte of a
//! URL list can open an element or an attribute.

use std::fmt::Write;

use similar::{ChangeTag, TextDiff};
use urinorm::escape::escape;
use urinorm::report::ladder::json::{JsonEvidence, JsonReport, JsonStep};
use urinorm::report::ladder::{Capture, Merge, MissedExample};

/// The page for `report`, the value `--json` prints.
pub fn page(report: &JsonReport) -> String {
    let mut html = String::with_capacity(16 * 1024);
    html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    let _ = writeln!(
        html,
        "<title>urinorm ladder: {} lines read</title>",
        count(report.lines_read)
    );
    let _ = writeln!(html, "<style>{STYLE}</style>\n</head>\n<body>");
    html += "<h1>Which rung? What each step of the ladder merges</h1>\n";
    if let Some(fraction) = report.sample {
        let percent = fraction * 100.0;
        let _ = writeln!(
            html,
            "<p class=\"estimate\">ESTIMATE from a {percent:.1}% sample of hosts</p>"
        );
    }
    let _ = writeln!(
        html,
        "<p class=\"lede\">{}; {} rejected at the scheme rung.</p>",
        text(&lines_read(report)),
        count(scheme_rejected(report)),
    );
    let _ = writeln!(
        html,
        "<p class=\"recommend\">{}</p>",
        text(&recommendation(report))
    );
    collapse_chart(&mut html, report);
    evidence(&mut html, report);
    attribution_charts(&mut html, report);
    examples(&mut html, report);
    run_facts(&mut html, report);
    html += "</body>\n</html>\n";
    html
}

const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; color: #1d2330; margin: 2em auto; max-width: 62em; padding: 0 1.2em; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #d6dae3; padding-bottom: .2em; }
h3 { font-size: 1.02em; margin: 1.4em 0 .4em; }
.lede { color: #4a5366; margin-top: 0; }
.estimate { background: #fff3cd; border: 1px solid #e6c65c; padding: .4em .7em; font-weight: 600; }
.note { color: #4a5366; font-size: .92em; }
.recommend { background: #eef6ee; border: 1px solid #9cc79c; padding: .5em .8em; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 13px system-ui, sans-serif; fill: #1d2330; }
svg .label { text-anchor: end; }
svg .value { fill: #4a5366; }
svg .bar { fill: #4f7cc9; }
svg .bar.merge { fill: #d9822b; }
svg .bar.site { fill: #3f9c6d; }
svg .bar.false { fill: #c94f4f; }
svg .bar.missed { fill: #8a6bc9; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.merge { border-left: 3px solid #d6dae3; padding: .1em 0 .1em .8em; margin: .7em 0; }
.merge .key { margin: .2em 0; }
.merge ul { margin: .2em 0; padding-left: 1.4em; }
.merge .size { color: #4a5366; }
.risk { font-weight: normal; color: #4a5366; }
mark { background: #ffd166; color: inherit; border-radius: 2px; }
.gap { display: inline-block; width: 0; height: 1.1em; vertical-align: -0.2em; border-left: 2px solid #d9822b; margin: 0 1px; }
.tag { display: inline-block; background: #eef1f6; border-radius: 3px; padding: 0 .4em; margin-right: .3em; font-size: .9em; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { text-align: left; padding: .2em .8em .2em 0; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
";

/// The lines read and what became of them, as `dedup` counts lines (the
/// page's and the table's words).
pub fn lines_read(report: &JsonReport) -> String {
    let mut text = format!(
        "{} lines read: {} looked at",
        report.lines_read, report.lines
    );
    if report.estimate {
        text += &format!(" (in the sample), {} left out of it", report.left_out);
    }
    text += &format!(", {} blank", report.blank);
    if report.header > 0 {
        text += &format!(", {} header", report.header);
    }
    if report.binary > 0 {
        text += &format!(", {} in binary files", report.binary);
    }
    text
}

/// The step to take, in one sentence with its precision, recall and the
/// lines it saves, and why the steps that merge more are not it; without a
/// crawl index, that a recommendation needs one, and what the safe step
/// merges.
pub fn recommendation(report: &JsonReport) -> String {
    let Some(chosen) = &report.recommendation else {
        let safe = report.steps.iter().find(|s| s.name == "protocol:safe");
        let given = report.steps.first().map_or(0, |s| s.distinct);
        let mut text = "No step is recommended: that needs a crawl index to judge the merges by \
                        (--cdx, --cdxj, --warc or --digest-field N)."
            .to_string();
        if let Some(safe) = safe {
            text += &format!(
                " Without one: protocol:safe keeps {} distinct keys, {} fewer than the \
                 lines as given.",
                safe.distinct,
                given.saturating_sub(safe.distinct)
            );
        }
        return text;
    };
    let share = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
    let mut text = format!(
        "Recommended: {}, the step with the most right merges ({} pair{} of URLs that are \
         one content) among those with at most {} false merge{}: precision {}, recall {}; \
         it keeps {} distinct keys, {} fewer than the lines as given.",
        chosen.step,
        chosen.right_pairs,
        plural(chosen.right_pairs),
        chosen.max_false_merges,
        plural(chosen.max_false_merges),
        share(chosen.precision),
        share(chosen.recall),
        chosen.distinct,
        chosen.saved,
    );
    for over in &chosen.passed_over {
        text += &format!(
            " {} merges more ({} right pairs) but makes {} false merge{}.",
            over.step,
            over.right_pairs,
            over.false_merges,
            plural(over.false_merges),
        );
    }
    text
}

/// The ending of a plural noun counted `n`.
fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whether `step`'s largest false merges are shown: when it has more than
/// the step it is over (else they are that step's, shown there), in the
/// text and on the page alike.
pub fn shows_false_examples(report: &JsonReport, step: &JsonStep, e: &JsonEvidence) -> bool {
    let before = (step.over.as_deref())
        .and_then(|name| report.steps.iter().find(|s| s.name == name))
        .and_then(|s| s.evidence.as_ref())
        .map_or(0, |b| b.counts.false_merges);
    e.counts.false_merges > before && !e.false_examples.is_empty()
}

/// The note beside a missed merge that looks like one page served for many
/// URLs ([`MissedExample::looks_like_an_error_page`]).
pub fn error_page_note(missed: &MissedExample) -> &'static str {
    match missed.likely_error_page {
        true => " (likely an error page served for many URLs, a soft 404: not a merge to make)",
        false => "",
    }
}

/// Each step's collapse, what the reader compares: distinct keys differ
/// by a fraction of a percent from step to step, so bars of them would
/// look alike.
fn collapse_chart(html: &mut String, report: &JsonReport) {
    html.push_str("<h2>What each step merges</h2>\n");
    let lines = report.lines.max(1) as f64;
    let rows: Vec<Row> = report
        .steps
        .iter()
        .map(|step| {
            let distinct = count(step.distinct);
            let note = match &step.over {
                None => format!("(none before it), {distinct} distinct as written"),
                Some(over) => format!(
                    "({:.2}%), {distinct} distinct, over {over}",
                    100.0 * step.collapsed as f64 / lines
                ),
            };
            Row {
                label: step.name.clone(),
                value: step.collapsed,
                note,
            }
        })
        .collect();
    bar_chart(html, "collapsed", "", &rows);
    html.push_str(
        "<p class=\"note\">Each step's bar is how many distinct keys fewer it leaves \
         than the step it is over (the lines it merged beyond that step), then that \
         as a share of the lines looked at, and the distinct keys it leaves.</p>\n",
    );
}

/// What a crawl index's digests say of each step: precision and recall,
/// false merges (pages that differ under one key) and missed ones (one
/// content under several keys), charted, with examples.
fn evidence(html: &mut String, report: &JsonReport) {
    let Some(summary) = &report.evidence else {
        return;
    };
    html.push_str("<h2>Which merges are right: the content digests</h2>\n");
    let _ = writeln!(
        html,
        "<p class=\"note\">{} captures of content (2xx or revisit) of {} URLs in {} \
         contents ({} URLs served several digests: a page that changed is one content \
         through them); {}{} other lines left out, {} rejected. Precision: of the pairs \
         of URLs a step merges, those that are one content; recall: of the pairs that \
         are one content, those it merges.</p>",
        count(summary.captures),
        count(summary.urls),
        count(summary.contents),
        count(summary.changing),
        super::ladder::redirects_joined(summary.redirects, count, "; "),
        count(summary.not_content),
        count(summary.rejected),
    );
    // With a crawl index, every step is judged.
    let judged: Vec<(&JsonStep, &JsonEvidence)> = report
        .steps
        .iter()
        .filter_map(|step| step.evidence.as_ref().map(|e| (step, e)))
        .collect();
    let ratio = |r: Option<f64>| r.map_or("-".to_string(), |r| format!("{r:.4}"));
    html.push_str(
        "<table class=\"evidence\">\n<tr><th>step</th><th>precision</th><th>recall</th>\
         <th>false merges</th><th>their lines</th><th>missed merges</th><th>extra keys</th></tr>\n",
    );
    for (step, e) in &judged {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            text(&step.name),
            ratio(e.precision),
            ratio(e.recall),
            count(e.counts.false_merges),
            count(e.counts.false_lines),
            count(e.counts.missed),
            count(e.counts.missed_keys),
        );
    }
    html.push_str("</table>\n");
    let rows = |field: fn(&JsonEvidence) -> u64, unit: &str| -> Vec<Row> {
        judged
            .iter()
            .map(|(step, e)| Row {
                label: step.name.clone(),
                value: field(e) as i64,
                note: unit.to_string(),
            })
            .collect()
    };
    html.push_str("<h3>False merges (pages that differ, one key) and missed merges (one content, several keys), by step</h3>\n");
    bar_chart(
        html,
        "false-merges",
        "false",
        &rows(|e| e.counts.false_merges, "false"),
    );
    bar_chart(
        html,
        "missed-merges",
        "missed",
        &rows(|e| e.counts.missed, "missed"),
    );
    for (step, e) in judged
        .iter()
        .filter(|(s, e)| shows_false_examples(report, s, e))
    {
        let examples = (e.false_examples.iter()).map(|m| (m.lines, &m.captures[..], ""));
        let heading = format!("Largest false merges at {}", step.name);
        captures_group(html, &heading, examples, "lines");
    }
    if let Some((last, e)) = judged
        .iter()
        .rev()
        .find(|(_, e)| !e.missed_examples.is_empty())
    {
        let examples =
            (e.missed_examples.iter()).map(|m| (m.keys, &m.captures[..], error_page_note(m)));
        let heading = format!("Largest missed merges at {}", last.name);
        captures_group(html, &heading, examples, "keys");
    }
}

/// Examples of false or missed merges: each a size (in `unit`s), its
/// captures (spelling and digest) and a note beside its size.
fn captures_group<'a>(
    html: &mut String,
    heading: &str,
    examples: impl ExactSizeIterator<Item = (u64, &'a [Capture], &'a str)>,
    unit: &str,
) {
    if examples.len() == 0 {
        return;
    }
    let _ = writeln!(html, "<h3>{}</h3>", text(heading));
    for (size, captures, note) in examples {
        let _ = writeln!(
            html,
            "<div class=\"merge\">\n<p class=\"key\"><span class=\"size\">{} {unit}</span>{}</p>\n<ul>",
            count(size),
            text(note),
        );
        for capture in captures {
            let _ = writeln!(
                html,
                "<li><code>{}</code> <span class=\"tag\">{}</span></li>",
                text(&capture.spelling),
                text(&capture.served()),
            );
        }
        html.push_str("</ul>\n</div>\n");
    }
}

/// Merges each transform, each rules file and the sites account for.
fn attribution_charts(html: &mut String, report: &JsonReport) {
    html.push_str("<h2>What does the merging</h2>\n");
    html.push_str(
        "<p class=\"note\">Each transform alone over the scheme rung: how many \
         distinct keys fewer it makes.</p>\n",
    );
    let transforms: Vec<Row> = (report.attribution.iter())
        .map(|row| Row::bare(row.transform.clone(), row.merges))
        .collect();
    bar_chart(html, "attribution", "merge", &transforms);
    html.push_str(
        "<table class=\"risks\">\n<tr><th>transform</th><th>risk of a false merge</th></tr>\n",
    );
    for row in &report.attribution {
        let _ = writeln!(
            html,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            text(&row.transform),
            text(&row.risk)
        );
    }
    html.push_str("</table>\n");
    if !report.rules_attribution.is_empty() {
        let rules: Vec<Row> = (report.rules_attribution.iter())
            .map(|row| Row::bare(row.rules.clone(), row.merges))
            .collect();
        html.push_str("<h3>Each rules file alone, over the scheme rung</h3>\n");
        bar_chart(html, "rules_attribution", "merge", &rules);
    }
    html.push_str("<h3>Sites (scheme rung, Public Suffix List)</h3>\n");
    let sites = [("hosts", report.hosts), ("domains", report.domains)]
        .map(|(name, n)| Row::bare(format!("distinct {name}"), n as i64));
    bar_chart(html, "sites", "site", &sites);
    let top = report.top_hosts.iter().map(|host| {
        let name = format!("<code>{}</code>", text(&host.host));
        (name, host.lines)
    });
    lines_table(html, "top-hosts", "host", top);
}

/// Per step, its largest new merges, then per transform, its largest
/// merges alone: the key, each spelling with what differs from the key
/// marked, and what joined them.
fn examples(html: &mut String, report: &JsonReport) {
    html.push_str("<h2>Example merges</h2>\n");
    html.push_str(
        "<p class=\"note\">The largest classes new at each step: the key, then two \
         spellings that the step below kept apart, with the characters that \
         differ from the key <mark>marked</mark> and a bar <span class=\"gap\"></span> \
         where the key has characters the spelling lacks.</p>\n",
    );
    for step in &report.steps {
        merge_group(html, &text(&step.name), &step.examples);
    }
    html.push_str(
        "<h2>Example merges of each transform alone</h2>\n<p class=\"note\">The largest \
         classes each transform makes alone over the scheme rung.</p>\n",
    );
    for row in &report.attribution {
        let heading = format!(
            "{} <span class=\"risk\">(risk: {})</span>",
            text(&row.transform),
            text(&row.risk)
        );
        merge_group(html, &heading, &row.examples);
    }
}

/// A heading (already HTML) and its merges, if there are any.
fn merge_group(html: &mut String, heading: &str, merges: &[Merge]) {
    if merges.is_empty() {
        return;
    }
    let _ = writeln!(html, "<h3>{heading}</h3>");
    for merge in merges {
        let _ = writeln!(
            html,
            "<div class=\"merge\">\n<p class=\"key\"><span class=\"size\">{} lines →</span> <code>{}</code></p>\n<ul>",
            count(merge.size),
            text(&merge.key)
        );
        for spelling in &merge.spellings {
            let _ = writeln!(
                html,
                "<li><code>{}</code></li>",
                marked(spelling, &merge.key)
            );
        }
        html.push_str("</ul>\n");
        if !merge.joined_by.is_empty() {
            html.push_str("<p class=\"by\">joined by: ");
            for reason in &merge.joined_by {
                let _ = write!(html, "<span class=\"tag\">{}</span>", text(reason));
            }
            html.push_str("</p>\n");
        }
        html.push_str("</div>\n");
    }
}

/// What was run, on what, and what it found wrong: enough to run it again.
fn run_facts(html: &mut String, report: &JsonReport) {
    let run = &report.run;
    html.push_str("<h2>The run</h2>\n<table class=\"run\">\n");
    let mut fact = |name: &str, value: String| {
        let _ = writeln!(html, "<tr><th>{name}</th><td>{value}</td></tr>");
    };
    fact("urinorm", text(&run.version));
    fact(
        "command",
        format!("<code>{}</code>", text(&run.command.join(" "))),
    );
    let inputs: Vec<String> = (run.inputs.iter())
        .map(|i| format!("<code>{}</code>", text(i)))
        .collect();
    fact("inputs", inputs.join("<br>"));
    fact("threads", count(run.threads as u64));
    fact("lines", text(&lines_read(report)));
    fact(
        "time",
        format!("<span class=\"time\">{:.2}</span> s", report.seconds),
    );
    html.push_str("</table>\n");
    let _ = writeln!(
        html,
        "<h3>Rejected lines: {}</h3>",
        count(scheme_rejected(report))
    );
    if report.rejected_by_reason.is_empty() {
        html.push_str("<p class=\"note\">None: every line is a URI reference.</p>\n");
        return;
    }
    let reasons = (report.rejected_by_reason.iter()).map(|r| (text(&r.reason), r.lines));
    lines_table(html, "rejected", "reason", reasons);
}

/// A table of names (already HTML) and their lines, the count also as a
/// data attribute.
fn lines_table(
    html: &mut String,
    class: &str,
    what: &str,
    rows: impl ExactSizeIterator<Item = (String, u64)>,
) {
    if rows.len() == 0 {
        return;
    }
    let _ = writeln!(
        html,
        "<table class=\"{class}\">\n<tr><th>{what}</th><th>lines</th></tr>"
    );
    for (name, lines) in rows {
        let _ = writeln!(
            html,
            "<tr><td>{name}</td><td class=\"n\" data-lines=\"{lines}\">{}</td></tr>",
            count(lines)
        );
    }
    html.push_str("</table>\n");
}

/// One bar of a chart.
struct Row {
    label: String,
    value: i64,
    note: String,
}

impl Row {
    /// A bar with no note beside its value.
    fn bare(label: String, value: i64) -> Row {
        Row {
            label,
            value,
            note: String::new(),
        }
    }
}

/// A horizontal bar chart; each bar carries its label and value as data
/// attributes (what the tests read back).
fn bar_chart(html: &mut String, chart: &str, class: &str, rows: &[Row]) {
    const BARS: i64 = 330;
    const ROW: i64 = 26;
    // Room for the longest label and the longest value and note, at about
    // 7.5 px a character of the 13 px font: the viewBox scales the whole
    // to the page, so nothing is cut off at any width.
    let room = |chars: usize| 12 + (chars * 15).div_ceil(2) as i64;
    let longest = |of: &dyn Fn(&Row) -> usize| rows.iter().map(of).max().unwrap_or(0);
    let label_room = room(longest(&|r: &Row| shown(&r.label).chars().count())).max(200);
    let value_room = room(longest(&|r: &Row| {
        thousands(r.value).len() + 1 + shown(&r.note).chars().count()
    }))
    .max(230);
    let chart_width = label_room + BARS + value_room;
    let max = rows.iter().map(|r| r.value).max().unwrap_or(0).max(1);
    let height = ROW * rows.len() as i64 + 6;
    let _ = writeln!(
        html,
        "<svg class=\"chart\" data-chart=\"{chart}\" viewBox=\"0 0 {chart_width} {height}\" width=\"{chart_width}\" height=\"{height}\" role=\"img\">"
    );
    for (i, row) in rows.iter().enumerate() {
        let y = ROW * i as i64 + 4;
        let width = (BARS * row.value.max(0) / max).max(i64::from(row.value > 0));
        let label = text(&row.label);
        let _ = writeln!(
            html,
            "<text class=\"label\" x=\"{}\" y=\"{}\">{label}</text>\
             <rect class=\"bar {class}\" x=\"{label_room}\" y=\"{y}\" width=\"{width}\" height=\"{}\" data-label=\"{label}\" data-value=\"{}\"><title>{label}: {}</title></rect>\
             <text class=\"value\" x=\"{}\" y=\"{}\">{} {}</text>",
            label_room - 8,
            y + 15,
            ROW - 8,
            row.value,
            thousands(row.value),
            label_room + width + 6,
            y + 15,
            thousands(row.value),
            text(&row.note),
        );
    }
    html.push_str("</svg>\n");
}

/// `spelling`, escaped, with the characters that are not in `key` (by a
/// character diff) marked, and a bar where `key` has characters it lacks.
fn marked(spelling: &str, key: &str) -> String {
    let (spelling, key) = (shown(spelling), shown(key));
    let diff = TextDiff::from_chars(spelling.as_str(), key.as_str());
    // Runs of one tag, so that a changed word is one mark.
    let mut runs: Vec<(ChangeTag, String)> = Vec::new();
    for change in diff.iter_all_changes() {
        match runs.last_mut() {
            Some((tag, run)) if *tag == change.tag() => run.push_str(change.value()),
            _ => runs.push((change.tag(), change.value().to_string())),
        }
    }
    // A deletion beside an insertion is a replacement: one mark, whose
    // title tells what the key has instead.
    let mut html = String::new();
    for (i, (tag, run)) in runs.iter().enumerate() {
        let tag_at = |j: Option<usize>| j.and_then(|j| runs.get(j)).map(|r| r.0);
        let (before, after) = (tag_at(i.checked_sub(1)), tag_at(Some(i + 1)));
        let run = html_escape(run);
        let _ = match tag {
            ChangeTag::Equal => write!(html, "{run}"),
            ChangeTag::Delete => match [before, after]
                .into_iter()
                .position(|t| t == Some(ChangeTag::Insert))
            {
                Some(side) => {
                    let instead = html_escape(&runs[if side == 0 { i - 1 } else { i + 1 }].1);
                    write!(html, "<mark title=\"the key has {instead}\">{run}</mark>")
                }
                None => write!(html, "<mark>{run}</mark>"),
            },
            ChangeTag::Insert if before == Some(ChangeTag::Delete) => Ok(()),
            ChangeTag::Insert if after == Some(ChangeTag::Delete) => Ok(()),
            ChangeTag::Insert => write!(
                html,
                "<span class=\"gap\" title=\"the key has {run} here\"></span>"
            ),
        };
    }
    html
}

/// A string from the input or the user, as a reader may see it (see
/// [`escape`]), whole.
fn shown(s: &str) -> String {
    escape(s.as_bytes(), usize::MAX)
}

/// [`shown`], then escaped for HTML text and attribute values.
fn text(s: &str) -> String {
    html_escape(&shown(s))
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The lines the scheme rung rejected: every line the report leaves out.
fn scheme_rejected(report: &JsonReport) -> u64 {
    (report.steps.iter())
        .find(|step| step.name == "scheme")
        .map_or(0, |step| step.rejected)
}

/// A count with thousands separators.
fn count(n: u64) -> String {
    thousands(n as i64)
}

fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::from(if n < 0 { "-" } else { "" });
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_what_differs_from_the_key() {
        assert_eq!(
            marked("HTTP://Example.com:80/", "http://example.com/"),
            "<mark title=\"the key has http\">HTTP</mark>://<mark title=\"the key has e\">E</mark>xample.com<mark>:80</mark>/"
        );
        assert_eq!(
            marked("http://a/<b>", "http://a/"),
            "http://a/<mark>&lt;b&gt;</mark>"
        );
        assert_eq!(
            marked("http://a/", "https://a/"),
            "http<span class=\"gap\" title=\"the key has s here\"></span>://a/"
        );
    }

    #[test]
    fn escapes_for_a_reader_then_for_html() {
        assert_eq!(text("a\u{1b}<\"'&"), "a\\x1b&lt;&quot;&#39;&amp;");
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(-1000), "-1,000");
    }
}
