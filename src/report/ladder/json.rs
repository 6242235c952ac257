//! The report as the command line prints it: the table, `ladder --json`
//! and the page of `ladder --html` are all drawn from this one typed value,
//! so they give the same numbers, and a field renamed here fails to compile
//! where it is read. Beside the [`Report`] it holds what a reader needs that
//! the model leaves to its printer: whether it is an estimate, each
//! transform's name and risk, each step's precision and recall, and the
//! facts of the run. The model is kept apart from it: its steps know their
//! kind and its transforms are enums, where the JSON has names.
//!
//! It knows the report's fields and their JSON names; nothing of how the
//! report is computed, and nothing of tables or pages.

use serde::{Deserialize, Serialize};

use super::recommend::Recommendation;
use super::{
    Evidence, EvidenceSummary, FalseExample, Merge, MissedExample, Report, StepReport,
    TransformMerges,
};
use crate::report::evidence::Judgement;

/// The whole report with the facts of its run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonReport {
    pub lines_read: u64,
    pub lines: u64,
    pub left_out: u64,
    pub blank: u64,
    pub header: u64,
    pub binary: u64,
    /// The report is from a sample of the hosts.
    pub estimate: bool,
    pub sample: Option<f64>,
    pub steps: Vec<JsonStep>,
    pub rejected_by_reason: Vec<JsonReason>,
    pub attribution: Vec<JsonTransform>,
    pub rules_attribution: Vec<JsonRules>,
    pub hosts: u64,
    pub domains: u64,
    pub top_hosts: Vec<JsonHost>,
    pub evidence: Option<EvidenceSummary>,
    /// The step to take, by the evidence (a crawl index's only).
    pub recommendation: Option<Recommendation>,
    pub seconds: f64,
    pub run: RunFacts,
}

/// What the report does not hold about its run: enough, with it, to run it
/// again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunFacts {
    /// The version of urinorm that made the report.
    pub version: String,
    /// The command line.
    pub command: Vec<String>,
    /// The inputs' names, as given (`-` for standard input).
    pub inputs: Vec<String>,
    pub threads: usize,
}

/// One line of the table ([`StepReport`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonStep {
    pub name: String,
    pub over: Option<String>,
    pub distinct: u64,
    pub collapsed: i64,
    pub rejected: u64,
    pub seconds: f64,
    pub examples: Vec<Merge>,
    pub evidence: Option<JsonEvidence>,
}

/// What one protocol transform does alone ([`TransformMerges`]), with its
/// risk of a false merge.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonTransform {
    pub transform: String,
    pub merges: i64,
    pub risk: String,
    pub examples: Vec<Merge>,
    pub evidence: Option<JsonEvidence>,
}

/// What one rules file merges alone over the scheme rung.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonRules {
    pub rules: String,
    pub merges: i64,
}

/// One of the hosts with most lines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonHost {
    pub host: String,
    pub lines: u64,
}

/// Why the scheme rung rejected lines, with how many.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonReason {
    pub reason: String,
    pub lines: u64,
}

/// A step's judgement by digests ([`Evidence`]), with its precision and
/// recall worked out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JsonEvidence {
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    /// Its counts, among the fields above and below.
    #[serde(flatten)]
    pub counts: Judgement,
    pub false_examples: Vec<FalseExample>,
    pub missed_examples: Vec<MissedExample>,
}

impl JsonReport {
    /// `report` as the JSON tells it, with the facts of its `run`.
    pub fn new(report: &Report, run: RunFacts) -> JsonReport {
        JsonReport {
            lines_read: report.lines_read,
            lines: report.lines,
            left_out: report.left_out,
            blank: report.blank,
            header: report.header,
            binary: report.binary,
            estimate: report.sample.is_some(),
            sample: report.sample,
            steps: report.steps.iter().map(JsonStep::new).collect(),
            rejected_by_reason: (report.rejected_by_reason.iter())
                .map(|(reason, lines)| JsonReason {
                    reason: reason.to_string(),
                    lines: *lines,
                })
                .collect(),
            attribution: report.attribution.iter().map(JsonTransform::new).collect(),
            rules_attribution: (report.rules_attribution.iter())
                .map(|(rules, merges)| JsonRules {
                    rules: rules.clone(),
                    merges: *merges,
                })
                .collect(),
            hosts: report.hosts,
            domains: report.domains,
            top_hosts: (report.top_hosts.iter())
                .map(|(host, lines)| JsonHost {
                    host: host.clone(),
                    lines: *lines,
                })
                .collect(),
            evidence: report.evidence.clone(),
            recommendation: report.recommendation.clone(),
            seconds: report.seconds,
            run,
        }
    }

    /// The report as a JSON value: objects' keys in `serde_json`'s order
    /// (sorted), as `--json` has always printed them.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("the report has string keys and no failing field")
    }
}

impl RunFacts {
    /// The facts of a run of this version of urinorm.
    pub fn new(command: Vec<String>, inputs: Vec<String>, threads: usize) -> RunFacts {
        RunFacts {
            version: env!("CARGO_PKG_VERSION").to_string(),
            command,
            inputs,
            threads,
        }
    }
}

impl JsonStep {
    fn new(step: &StepReport) -> JsonStep {
        JsonStep {
            name: step.name.clone(),
            over: step.over.clone(),
            distinct: step.distinct,
            collapsed: step.collapsed,
            rejected: step.rejected,
            seconds: step.seconds,
            examples: step.examples.clone(),
            evidence: step.evidence.as_ref().map(JsonEvidence::new),
        }
    }
}

impl JsonTransform {
    fn new(row: &TransformMerges) -> JsonTransform {
        JsonTransform {
            transform: row.transform.name().to_string(),
            merges: row.merges,
            risk: row.transform.risk().to_string(),
            examples: row.examples.clone(),
            evidence: row.evidence.as_ref().map(JsonEvidence::new),
        }
    }
}

impl JsonEvidence {
    fn new(evidence: &Evidence) -> JsonEvidence {
        let counts = &evidence.counts;
        JsonEvidence {
            precision: counts.precision(),
            recall: counts.recall(),
            counts: Judgement {
                false_examples: Vec::new(),
                missed_examples: Vec::new(),
                ..counts.clone()
            },
            false_examples: evidence.false_examples.clone(),
            missed_examples: evidence.missed_examples.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Capture, StepKind};
    use super::*;
    use crate::normalize::Rung;
    use crate::normalize::protocol::Transform;
    use crate::report::evidence::Judgement;

    fn report() -> Report {
        let string = StepReport {
            kind: StepKind::Rung(Rung::String),
            name: "string".into(),
            over: None,
            distinct: 2,
            collapsed: 0,
            rejected: 1,
            seconds: 0.5,
            examples: Vec::new(),
            evidence: None,
        };
        let strip_www = TransformMerges {
            transform: Transform::StripWww,
            merges: 1,
            examples: vec![Merge {
                size: 2,
                key: "http://a/".into(),
                spellings: vec!["http://a/".into(), "http://www.a/".into()],
                joined_by: vec!["strip-www".into()],
            }],
            evidence: None,
        };
        Report {
            lines_read: 4,
            lines: 3,
            left_out: 0,
            blank: 1,
            header: 0,
            binary: 0,
            sample: Some(0.5),
            steps: vec![string],
            rejected_by_reason: vec![("bad".into(), 1)],
            attribution: vec![strip_www],
            rules_attribution: vec![("site.rules".into(), 3)],
            hosts: 2,
            domains: 1,
            top_hosts: vec![("a".into(), 2)],
            evidence: None,
            recommendation: None,
            seconds: 1.5,
        }
    }

    fn run() -> RunFacts {
        RunFacts {
            version: "1.2.3".into(),
            command: vec!["urinorm".into(), "ladder".into()],
            inputs: vec!["-".into()],
            threads: 2,
        }
    }

    #[test]
    fn the_json_has_every_field_under_its_name_keys_sorted() {
        let json = JsonReport::new(&report(), run()).to_value().to_string();
        let expected = concat!(
            r#"{"attribution":[{"evidence":null,"examples":[{"joined_by":["strip-www"],"key":"http://a/","#,
            r#""size":2,"spellings":["http://a/","http://www.a/"]}],"merges":1,"risk":"#,
            r#""medium: www.x.com and x.com can be different sites","transform":"strip-www"}],"#,
            r#""binary":0,"blank":1,"domains":1,"estimate":true,"evidence":null,"header":0,"hosts":2,"#,
            r#""left_out":0,"lines":3,"lines_read":4,"recommendation":null,"#,
            r#""rejected_by_reason":[{"lines":1,"reason":"bad"}],"#,
            r#""rules_attribution":[{"merges":3,"rules":"site.rules"}],"#,
            r#""run":{"command":["urinorm","ladder"],"inputs":["-"],"threads":2,"version":"1.2.3"},"#,
            r#""sample":0.5,"seconds":1.5,"steps":[{"collapsed":0,"distinct":2,"evidence":null,"#,
            r#""examples":[],"name":"string","over":null,"rejected":1,"seconds":0.5}],"#,
            r#""top_hosts":[{"host":"a","lines":2}]}"#,
        );
        assert_eq!(json, expected);
    }

    #[test]
    fn the_json_reads_back_as_the_same_report() {
        let json = JsonReport::new(&report(), run());
        let text = format!("{:#}", json.to_value());
        let read: JsonReport = serde_json::from_str(&text).expect("the report's own JSON");
        assert_eq!(read, json);
    }

    #[test]
    fn a_judgement_gives_its_precision_recall_and_urls() {
        let evidence = Evidence {
            counts: Judgement {
                merged_pairs: 4,
                right_pairs: 3,
                same_pairs: 6,
                ..Judgement::default()
            },
            false_examples: Vec::new(),
            missed_examples: vec![MissedExample {
                keys: 2,
                captures: vec![Capture {
                    spelling: "http://a/".into(),
                    digest: "D".into(),
                    digests: 1,
                    redirect: None,
                }],
                likely_error_page: false,
            }],
        };
        let json = JsonEvidence::new(&evidence);
        assert_eq!((json.precision, json.recall), (Some(0.75), Some(0.5)));
        let value = serde_json::to_value(&json).unwrap();
        assert_eq!(
            value["missed_examples"][0]["captures"][0].to_string(),
            r#"{"digest":"D","digests":1,"url":"http://a/"}"#
        );
        assert_eq!(value["missed_examples"][0]["likely_error_page"], false);
    }
}
