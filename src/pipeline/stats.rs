//! What a run counted: every line read is accounted for exactly once.
//!
//! It knows counts, not how they were made.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use super::spill::SpillStats;

/// Counts of lines by reason (or repair), sorted by name for stable output.
pub type RejectCounts = BTreeMap<Cow<'static, str>, u64>;

/// The counts of one run.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub files: Vec<String>,
    /// Lines read, blank ones included.
    pub lines: u64,
    pub blank: u64,
    /// Lines whose URI is out of the run's scope (its filters).
    pub filtered: u64,
    /// Classes past their site's cap (`--max-per-host`): each counted once,
    /// by its first line; its later lines are duplicates as ever.
    pub capped: u64,
    /// First lines passed through as headers (`Options::header`).
    pub header: u64,
    /// Rejected lines by reason.
    pub rejected: RejectCounts,
    /// Lines the mapper repaired, by repair (a line may count under several).
    pub repaired: RejectCounts,
    /// Lines the site rules changed or took note of, by what they did
    /// (`changed-by-rules`, `clearurls-complete-provider`,
    /// `clearurls-redirection`).
    pub rules: RejectCounts,
    /// Invalid lines kept at the string rung (`--invalid pass`); they are
    /// also counted as unique or duplicate.
    pub passed: u64,
    /// Lines written, one per line (normalize) or per class (dedup).
    pub unique: u64,
    /// Lines that joined a class seen before (dedup only).
    pub duplicates: u64,
    /// With a seen store: lines whose key the store holds (admitted by an
    /// earlier run), none of them written.
    pub seen: Option<u64>,
    /// With a seen store that judges ages (`--seen-max-age`): unique lines
    /// whose key the store held, admitted longer ago than that (a recrawl:
    /// written, and admitted again with the run's time). Part of `unique`.
    pub expired: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub seconds: f64,
    pub threads: usize,
    /// Whether the run deduplicated (otherwise every accepted line was written).
    pub deduplicated: bool,
    /// When the keys outgrew the memory limit: what went to disk, and where.
    pub spill: Option<SpillStats>,
    /// The inputs that look like binary files, not lists of lines (a NUL
    /// byte near the start): none of their lines was read.
    pub binary: Vec<String>,
    /// The lines of those inputs, counted and never read.
    pub binary_lines: u64,
    /// Text inputs most of whose first lines are no URI at all: read,
    /// and named in a warning.
    pub unlike_uris: Vec<String>,
}

impl Stats {
    /// How many lines were rejected, all reasons together.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }

    /// The invariant of every run: read = unique + duplicates (+ seen) +
    /// capped + filtered + rejected + blank (+ header) (+ binary).
    pub fn balances(&self) -> bool {
        self.lines
            == self.unique
                + self.duplicates
                + self.seen.unwrap_or(0)
                + self.capped
                + self.filtered
                + self.rejected_total()
                + self.blank
                + self.header
                + self.binary_lines
    }

    /// The stats as JSON, with the caller's fields (the rung, say) added.
    pub fn to_json(&self, extra: &[(&str, Value)]) -> Value {
        let mut object = Map::new();
        object.insert("files".into(), json!(self.files));
        object.insert("lines".into(), json!(self.lines));
        object.insert("blank".into(), json!(self.blank));
        if self.header > 0 {
            object.insert("header".into(), json!(self.header));
        }
        object.insert("rejected".into(), json!(self.rejected_total()));
        object.insert("rejected_by_reason".into(), json!(self.rejected));
        object.insert("passed".into(), json!(self.passed));
        object.insert("repaired".into(), json!(self.repaired));
        if !self.rules.is_empty() {
            object.insert("rules".into(), json!(self.rules));
        }
        object.insert("unique".into(), json!(self.unique));
        object.insert("duplicates".into(), json!(self.duplicates));
        object.insert("capped".into(), json!(self.capped));
        object.insert("filtered".into(), json!(self.filtered));
        if let Some(seen) = self.seen {
            object.insert("seen".into(), json!(seen));
            object.insert("expired".into(), json!(self.expired));
        }
        object.insert("bytes_in".into(), json!(self.bytes_in));
        object.insert("bytes_out".into(), json!(self.bytes_out));
        object.insert("seconds".into(), json!(self.seconds));
        object.insert("threads".into(), json!(self.threads));
        if !self.binary.is_empty() {
            object.insert("binary_inputs".into(), json!(self.binary));
            object.insert("binary_lines".into(), json!(self.binary_lines));
        }
        if !self.unlike_uris.is_empty() {
            object.insert("unlike_uri_inputs".into(), json!(self.unlike_uris));
        }
        if let Some(spill) = &self.spill {
            object.insert(
                "spill".into(),
                json!({
                    "dir": spill.dir.display().to_string(),
                    "records": spill.records,
                    "bytes": spill.bytes,
                    "partitions": spill.partitions,
                }),
            );
        }
        for (key, value) in extra {
            object.insert((*key).to_string(), value.clone());
        }
        Value::Object(object)
    }
}

/// The one-line summary: `lines read = unique + duplicates (+ seen) (+
/// capped) (+ filtered) + rejected + blank`.
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lines, rejected, blank) = (self.lines, self.rejected_total(), self.blank);
        if self.deduplicated {
            let (unique, duplicates) = (self.unique, self.duplicates);
            write!(f, "{lines} lines read = {unique} unique")?;
            if self.expired > 0 {
                write!(f, " ({} of them expired in the seen store)", self.expired)?;
            }
            write!(f, " + {duplicates} duplicates")?;
            if let Some(seen) = self.seen {
                write!(f, " + {seen} seen")?;
            }
            if self.capped > 0 {
                write!(f, " + {} capped", self.capped)?;
            }
        } else {
            write!(f, "{lines} lines read = {} written", self.unique)?;
        }
        if self.filtered > 0 {
            write!(f, " + {} filtered", self.filtered)?;
        }
        write!(f, " + {rejected} rejected + {blank} blank")?;
        if self.header > 0 {
            write!(f, " + {} header", self.header)?;
        }
        if self.binary_lines > 0 {
            write!(f, " + {} in binary files", self.binary_lines)?;
        }
        if self.passed > 0 {
            write!(
                f,
                " ({} invalid lines passed through unchanged)",
                self.passed
            )?;
        }
        if !self.rules.is_empty() {
            let done: Vec<String> = self
                .rules
                .iter()
                .map(|(what, n)| format!("{n} {what}"))
                .collect();
            write!(f, " (site rules: {})", done.join(", "))?;
        }
        let mb_per_s = self.bytes_in as f64 / 1e6 / self.seconds.max(1e-9);
        write!(
            f,
            " in {:.2} s ({:.0} MB/s, {} threads)",
            self.seconds, mb_per_s, self.threads
        )?;
        if let Some(spill) = &self.spill {
            write!(
                f,
                "; over the memory limit: spilled {} lines ({:.1} MiB, {} partition files) to {}",
                spill.records,
                spill.bytes as f64 / (1 << 20) as f64,
                spill.partitions,
                spill.dir.display()
            )?;
        }
        Ok(())
    }
}
