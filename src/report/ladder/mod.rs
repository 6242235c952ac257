//! The ladder report: on the user's own lines, how many distinct keys each
//! rung and preset leaves, what each one merged (with real examples), and
//! how many merges each protocol transform adds on its own (with its
//! largest ones); and the sites the lines are on (distinct hosts and
//! registrable domains, the hosts with most lines).
//!
//! Two passes: every line is normalized at the three RFC rungs
//! ([`rfc_pass`]), then every class of the scheme rung (one line each)
//! through the protocol steps and each transform alone ([`protocol_pass`]).
//! Each step's keys are counted as 128-bit fingerprints — a collision
//! among 10^9 keys has a probability near 10^-21, so the counts are the
//! counts `dedup` gives. Lines are addressed by their place (`Place`) in the
//! inputs: a mapped file's lines are read where they lie; standard input is
//! read as a stream, the pipeline's chunks, and only the lines a class
//! refers to are copied ([`lines`]).
//!
//! It reads through the pipeline's input and chunker and the same line
//! preparation as `dedup` ([`Columns`]); it writes nothing itself.
//!
//! This file owns the public model (what is asked, [`Options`]; what is
//! found, [`Report`]) and [`run`], which strings the passes together. It
//! knows no flags and prints nothing: the command line prints the report's
//! typed form ([`json::JsonReport`]) as a table, as JSON or as a page.

mod chunk_prints;
mod classes;
mod examples;
pub mod json;
mod judged;
mod lines;
mod protocol_pass;
pub mod recommend;
mod rfc_pass;
mod steps;
#[cfg(test)]
mod testing;

use std::borrow::Cow;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::line::Columns;
use crate::line::crawl_index::IndexFormat;
use crate::normalize::Rung;
use crate::normalize::protocol::{Preset, Transform};
use crate::pipeline::input::Input;
use crate::pipeline::{MAX_LINE_BYTES, Progress, RunError, thread_pool};
use crate::report::evidence::Judgement;
use crate::rules::SiteRules;

pub(crate) use rfc_pass::learn_layout;
pub use steps::{Step, steps};

use chunk_prints::Skipped;
use lines::Reading;
use protocol_pass::{SchemePass, sites};
use rfc_pass::{RungCounts, count_rungs, rung_reports, sorted_reasons};
use steps::{RFC_RUNGS, SingleSteps, rung_index};

/// What a step of the report is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// One of the RFC rungs: string, syntax, scheme.
    Rung(Rung),
    /// The scheme rung and a preset's transforms: a step of the ladder, or
    /// one beside it (`--preset ia`).
    Preset(&'static Preset),
    /// The last preset plus one transform (`--with`).
    PresetPlus(Transform),
    /// A step plus the site rules (`--rules`, `--rules-clearurls`): the
    /// preset named with them (`--preset safe`), or else the ladder's last.
    Rules(Option<&'static Preset>),
}

impl StepKind {
    /// `string`, `syntax`, `scheme`, `protocol:safe`, `+lowercase-path`, …
    pub fn name(self) -> String {
        match self {
            StepKind::Rung(rung) => rung.name().to_string(),
            StepKind::Preset(preset) => format!("protocol:{}", preset.name),
            StepKind::PresetPlus(t) => format!("+{}", t.name()),
            StepKind::Rules(None) => "+rules".to_string(),
            StepKind::Rules(Some(preset)) => format!("protocol:{}+rules", preset.name),
        }
    }
}

/// What to compute.
#[derive(Clone, Debug)]
pub struct Options {
    /// How many example merges per step.
    pub examples: usize,
    /// Keep only hosts whose hash falls in this fraction (an estimate).
    pub sample: Option<f64>,
    /// One more step: the aggressive preset plus this transform.
    pub with: Option<Transform>,
    /// One more step beside the ladder: the scheme rung and a preset that
    /// is not a step of it.
    pub preset: Option<PresetStep>,
    pub threads: usize,
    /// Which column holds the URI and what is done to it first, as for `dedup`.
    pub columns: Columns,
    /// Longer lines are rejected (never truncated).
    pub max_line_bytes: usize,
    /// The first line of each input is a header, not looked at.
    pub header: bool,
    /// How many of the hosts with most lines to name.
    pub top_hosts: usize,
    /// Site rules: one more step with all of them, and each file's merges
    /// on its own.
    pub rules: Option<LadderRules>,
    /// The lines are a crawl index: judge each step's merges by the
    /// digests of what the URLs served ([`crate::report::evidence`]).
    pub index: Option<IndexFormat>,
    /// The false merges a recommended step may make ([`recommend`]).
    pub max_false_merges: u64,
}

/// The site rules a ladder measures: all of them together, and each file
/// alone, by name.
#[derive(Clone, Debug)]
pub struct LadderRules {
    pub all: SiteRules,
    pub files: Vec<(String, SiteRules)>,
}

/// A preset measured beside the ladder (`ia`).
#[derive(Clone, Copy, Debug)]
pub struct PresetStep {
    pub preset: &'static Preset,
    /// Whether `dedup` with this preset takes only the URIs a crawler can
    /// fetch ([`SchemeHost::fetchable`]): the step rejects the others too,
    /// so that its counts are `dedup`'s.
    pub fetchable: bool,
}

/// At most this many rules files are attributed merges one by one (each
/// one more normalization of every class).
pub const MAX_ATTRIBUTED_RULES_FILES: usize = 48;

impl Default for Options {
    fn default() -> Options {
        Options {
            examples: 5,
            sample: None,
            with: None,
            preset: None,
            threads: 1,
            columns: Columns::default(),
            max_line_bytes: MAX_LINE_BYTES,
            header: false,
            top_hosts: 10,
            rules: None,
            index: None,
            max_false_merges: 0,
        }
    }
}

/// A class new at a step: equal there, two distinct spellings below.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merge {
    /// Lines in the class.
    pub size: u64,
    /// The class's key at this step.
    pub key: String,
    /// Two original lines, distinct at the step below (passwords masked).
    pub spellings: Vec<String>,
    /// The rules or transforms of this step that changed them.
    pub joined_by: Vec<String>,
}

/// One line of the table.
#[derive(Clone, Debug)]
pub struct StepReport {
    pub kind: StepKind,
    /// The kind's name.
    pub name: String,
    /// The name of the step it is compared with: the one before it, or the
    /// scheme rung for a preset beside the ladder; none for the first.
    pub over: Option<String>,
    pub distinct: u64,
    /// Distinct keys fewer than the step it is compared with (0 for the
    /// first).
    pub collapsed: i64,
    pub rejected: u64,
    /// Time spent on this step's own work, all threads together.
    pub seconds: f64,
    pub examples: Vec<Merge>,
    /// For a crawl index: what the digests say of its merges.
    pub evidence: Option<Evidence>,
}

/// What one protocol transform does alone over the scheme rung.
#[derive(Clone, Debug)]
pub struct TransformMerges {
    pub transform: Transform,
    /// Distinct keys fewer than the scheme rung.
    pub merges: i64,
    /// Its largest merges, largest first.
    pub examples: Vec<Merge>,
    /// For a crawl index: what the digests say of the scheme rung plus it.
    pub evidence: Option<Evidence>,
}

/// What the digests of a crawl index say of one step's merges (see
/// [`crate::report::evidence`]).
#[derive(Clone, Debug)]
pub struct Evidence {
    /// The counts (its examples name URLs by number: the two lists below
    /// show them).
    pub counts: Judgement,
    pub false_examples: Vec<FalseExample>,
    pub missed_examples: Vec<MissedExample>,
}

/// A class of a step that holds pages which differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FalseExample {
    pub lines: u64,
    /// How many contents it holds.
    pub contents: u64,
    /// The earliest capture of each of its first contents.
    pub captures: Vec<Capture>,
}

/// One content still under several keys at a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissedExample {
    pub keys: u64,
    /// The earliest capture under each of its first keys.
    pub captures: Vec<Capture>,
    /// Likely one page served for many URLs (an error page, a soft 404),
    /// not a merge to make: see [`MissedExample::looks_like_an_error_page`].
    pub likely_error_page: bool,
}

/// A content under at least this many keys, its URLs on at least as many
/// paths, is flagged as a likely error page.
pub const ERROR_PAGE_KEYS: u64 = 5;

impl MissedExample {
    /// Whether one content under `keys` keys, spelt `spellings` (all its
    /// URLs), looks like one page served for many URLs rather than a page
    /// under several spellings: at least [`ERROR_PAGE_KEYS`] keys and as
    /// many distinct paths, with case, a trailing `/` and an index file
    /// aside (a parameter a site ignores keeps the path; a case-insensitive
    /// site or an index file changes only that; a soft 404 answers every
    /// path alike).
    ///
    /// ```
    /// use urinorm::report::ladder::MissedExample;
    /// let missing = ["http://a/x", "http://a/y", "http://a/z", "http://a/v", "http://a/w"];
    /// assert!(MissedExample::looks_like_an_error_page(5, missing.into_iter()));
    /// let page = ["http://a/p?s=1", "http://a/P/", "http://a/p/index.html", "http://a/p?s=2"];
    /// assert!(!MissedExample::looks_like_an_error_page(9, page.into_iter()));
    /// ```
    pub fn looks_like_an_error_page<S: AsRef<str>>(
        keys: u64,
        spellings: impl Iterator<Item = S>,
    ) -> bool {
        if keys < ERROR_PAGE_KEYS {
            return false;
        }
        let mut paths = std::collections::HashSet::new();
        for spelling in spellings {
            let spelling = spelling.as_ref();
            let path = match crate::uri::UriRef::parse(spelling) {
                Ok(uri) => uri.path().to_ascii_lowercase(),
                Err(_) => spelling.to_ascii_lowercase(),
            };
            let file = path.rsplit('/').next().unwrap_or_default();
            let dir = match file.starts_with("index.") || file.starts_with("default.") {
                true => &path[..path.len() - file.len()],
                false => &path[..],
            };
            paths.insert(dir.trim_end_matches('/').to_string());
            if paths.len() as u64 >= ERROR_PAGE_KEYS {
                return true;
            }
        }
        false
    }
}

/// A URL as an example shows it: its spelling (password masked) and the
/// digest of its first capture, with how many digests it served; or, for
/// a URL only redirected from, the target of its first redirect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    /// (`url` in the JSON.)
    #[serde(rename = "url")]
    pub spelling: String,
    pub digest: String,
    pub digests: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect: Option<String>,
}

impl Capture {
    /// What an example says the URL served: its digest, or `-> target`
    /// for a URL only redirected from (as the input wrote them: a front end
    /// escapes them).
    pub fn served(&self) -> String {
        match &self.redirect {
            Some(target) => format!("-> {target}"),
            None => self.digest.clone(),
        }
    }
}

/// What a crawl index held: captures of content judged, lines that are
/// none, and the URLs and contents the captures make.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceSummary {
    /// Captures of content (2xx or revisit, with a digest) judged.
    pub captures: u64,
    /// Redirects judged: lines of a 3xx whose target (named by the index)
    /// is a URL captured, directly or through other redirects. Each joins
    /// the URL it redirects from to its target's content.
    #[serde(default)]
    pub redirects: u64,
    /// Lines that are no capture of content (another status, no digest,
    /// too long to read).
    pub not_content: u64,
    /// Captures of content whose URI the scheme rung rejects.
    pub rejected: u64,
    /// Distinct URLs (as spelt) among the captures judged.
    pub urls: u64,
    /// Contents they make (URLs joined by shared digests).
    pub contents: u64,
    /// URLs that served more than one digest (pages that changed).
    pub changing: u64,
}

/// The whole report. Every line read is one of: looked at, left out of
/// the sample, blank, a header, or in a binary input.
#[derive(Clone, Debug)]
pub struct Report {
    /// Every line of the inputs, as `dedup` counts them.
    pub lines_read: u64,
    /// The lines looked at: not blank, not a header, not in a binary
    /// input, and in the sample when it samples.
    pub lines: u64,
    /// Lines the sample left out.
    pub left_out: u64,
    pub blank: u64,
    /// The inputs' first lines, under `--header`.
    pub header: u64,
    /// Lines of inputs that look binary, not looked at.
    pub binary: u64,
    /// The sampled fraction, when the report is an estimate.
    pub sample: Option<f64>,
    pub steps: Vec<StepReport>,
    /// Why the scheme rung rejected lines, with how many: most first.
    pub rejected_by_reason: Vec<(Cow<'static, str>, u64)>,
    /// For each protocol transform: what it merges alone over the scheme
    /// rung.
    pub attribution: Vec<TransformMerges>,
    /// For each rules file: distinct keys fewer than the scheme rung with
    /// that file's rules alone.
    pub rules_attribution: Vec<(String, i64)>,
    /// Distinct hosts of the scheme rung's canonical forms, and distinct
    /// registrable domains among them (Public Suffix List).
    pub hosts: u64,
    pub domains: u64,
    /// The hosts with most lines, most first (ties by name), with their
    /// lines.
    pub top_hosts: Vec<(String, u64)>,
    /// For a crawl index: what it held (each step's and transform's
    /// judgement is beside its counts).
    pub evidence: Option<EvidenceSummary>,
    /// For a crawl index: the step to take ([`recommend`]).
    pub recommendation: Option<recommend::Recommendation>,
    pub seconds: f64,
}

/// Runs the report over `inputs`, telling `progress` the bytes read.
///
/// Two passes. The first goes over the lines, normalizing each at the three
/// RFC rungs. The protocol steps and the single transforms are functions of
/// the scheme rung's form, so the second goes over the scheme rung's classes,
/// one line each, in the order of their first lines: that gives the same
/// classes, sizes and examples as going over every line, for a fraction of
/// the work and none of the per-line memory.
pub fn run(
    inputs: &[Input],
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report, RunError> {
    let started = Instant::now();
    let pool = thread_pool(options.threads)?;
    let mut report = pool.install(|| measure(inputs, options, progress))?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The report's passes, on the run's threads; all but its time.
fn measure(
    inputs: &[Input],
    options: &Options,
    progress: &dyn Progress,
) -> Result<Report, RunError> {
    let steps = steps(options);
    let alone = SingleSteps::new(options);
    let reading = Reading::new(inputs, options);
    let counts = count_rungs(inputs, &reading, progress)?;
    let mut reports = rung_reports(&steps, &counts, &reading);
    let RungCounts {
        strings,
        tables: [syntax, scheme],
        rejected,
        rejected_by_reason,
        looked_at,
        skipped,
        captures,
        ..
    } = counts;
    // The second pass needs only the scheme rung's classes and their lines.
    drop((strings, syntax));
    let second = SchemePass::work(scheme, &reading, &steps[RFC_RUNGS.len()..], &alone);
    let scheme_rejected = rejected[rung_index(Rung::Scheme)];
    second.protocol_reports(&steps, scheme_rejected, &reading, &mut reports);
    let (mut attribution, rules_attribution) = second.attribution(&alone, &reading);
    let evidence = captures
        .map(|table| judged::judge(table, &second, &reading, &mut reports, &mut attribution));
    let (hosts, domains, top_hosts) = sites(second.worked, options.top_hosts);
    let recommendation = recommend::recommend(&reports, options.max_false_merges);
    let Skipped {
        left_out,
        blank,
        header,
        binary,
    } = skipped;
    Ok(Report {
        lines_read: looked_at + left_out + blank + header + binary,
        lines: looked_at,
        left_out,
        blank,
        header,
        binary,
        sample: options.sample,
        steps: reports,
        rejected_by_reason: sorted_reasons(rejected_by_reason),
        attribution,
        rules_attribution,
        hosts,
        domains,
        top_hosts,
        evidence,
        recommendation,
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::testing::{INDEX, LINES, index_options, report_of};
    use super::*;

    #[test]
    fn many_paths_serving_one_page_look_like_an_error_page() {
        let flagged = |keys, urls: &[&str]| {
            MissedExample::looks_like_an_error_page(keys, urls.iter().copied())
        };
        let paths = [
            "http://a/x",
            "http://a/y",
            "http://a/z",
            "http://a/v",
            "http://a/w",
        ];
        assert!(flagged(ERROR_PAGE_KEYS, &paths));
        assert!(!flagged(ERROR_PAGE_KEYS - 1, &paths));
        assert!(!flagged(ERROR_PAGE_KEYS, &paths[..4]));
        // One path with parameters, in several cases, with an index file
        // or a trailing slash: a page.
        let page = [
            "http://a/p?s=1",
            "http://a/p?s=2",
            "http://a/About",
            "http://a/ABOUT/",
            "http://a/about/index.html",
            "http://a/about/default.aspx",
        ];
        assert!(!flagged(9, &page));
    }

    /// Each step's name, distinct keys, collapse and rejects.
    fn table(report: &Report) -> Vec<(&str, u64, i64, u64)> {
        (report.steps.iter())
            .map(|s| (s.name.as_str(), s.distinct, s.collapsed, s.rejected))
            .collect()
    }

    #[test]
    fn every_line_is_counted_once_and_each_step_over_the_one_before() {
        let report = report_of(LINES, &Options::default());
        assert_eq!(
            (
                report.lines_read,
                report.lines,
                report.blank,
                report.left_out
            ),
            (9, 8, 1, 0)
        );
        assert_eq!(
            table(&report),
            [
                ("string", 7, 0, 1),
                ("syntax", 5, 2, 1),
                ("scheme", 4, 1, 1),
                ("protocol:safe", 4, 0, 1),
                ("protocol:aggressive", 3, 1, 1),
            ]
        );
        let over: Vec<Option<&str>> = report.steps.iter().map(|s| s.over.as_deref()).collect();
        assert_eq!(
            over,
            [
                None,
                Some("string"),
                Some("syntax"),
                Some("scheme"),
                Some("protocol:safe")
            ]
        );
        assert_eq!(
            report.rejected_by_reason,
            [("space is not allowed in a URI".into(), 1)]
        );
    }

    #[test]
    fn the_sites_are_the_scheme_rungs_hosts() {
        let report = report_of(LINES, &Options::default());
        assert_eq!((report.hosts, report.domains), (3, 2));
        let top = [("a.com", 5), ("b.org", 1), ("www.a.com", 1)].map(|(h, n)| (h.to_string(), n));
        assert_eq!(report.top_hosts, top);
    }

    #[test]
    fn only_a_crawl_index_is_judged() {
        let plain = report_of(LINES, &Options::default());
        assert!(plain.evidence.is_none());
        assert!(plain.steps.iter().all(|s| s.evidence.is_none()));
        let judged = report_of(INDEX, &index_options());
        let summary = judged.evidence.expect("an index is judged");
        assert_eq!(
            (summary.captures, summary.not_content, summary.rejected),
            (6, 1, 1)
        );
        assert_eq!(
            (summary.urls, summary.contents, summary.changing),
            (6, 4, 0)
        );
        assert!(judged.steps.iter().all(|s| s.evidence.is_some()));
        assert!(judged.attribution.iter().all(|t| t.evidence.is_some()));
    }
}
