//! The ladder's decision: which step to take, by a crawl index's evidence.
//! Among the steps whose false merges (keys holding pages that differ) are
//! within a tolerance, the one with the most right merges (pairs of URLs
//! that are one content given one key); a tie goes to fewer false merges,
//! then to the step named first (lower on the ladder: it changes less).
//!
//! It knows the steps' judgements; nothing of how they were computed or
//! printed.

use serde::{Deserialize, Serialize};

use super::StepReport;
use crate::report::evidence::Judgement;

/// The step to take, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// The step's name, as the table shows it.
    pub step: String,
    /// The tolerance it was chosen within: false merges at most.
    pub max_false_merges: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub right_pairs: u64,
    pub false_merges: u64,
    /// Distinct keys at the step, and how many fewer than the first step's
    /// (the lines as given, byte for byte): the lines a dedup at it saves.
    pub distinct: u64,
    pub saved: u64,
    /// The steps that merge more right pairs but are over the tolerance:
    /// why they were not taken.
    pub passed_over: Vec<PassedOver>,
}

/// A step that would merge more, and the false merges that rule it out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassedOver {
    pub step: String,
    pub right_pairs: u64,
    pub false_merges: u64,
}

/// The recommendation over `steps` (the first the lines as given) within
/// `max_false_merges`; `None` when the steps were not judged (no crawl
/// index).
///
/// ```
/// use urinorm::report::ladder::recommend::recommend;
/// assert!(recommend(&[], 0).is_none());
/// ```
pub fn recommend(steps: &[StepReport], max_false_merges: u64) -> Option<Recommendation> {
    let judged: Vec<(&StepReport, &Judgement)> = (steps.iter())
        .map(|step| Some((step, &step.evidence.as_ref()?.counts)))
        .collect::<Option<_>>()?;
    let within = |j: &Judgement| j.false_merges <= max_false_merges;
    // The first of the best: `max_by_key` keeps the last of equals, so the
    // steps are walked from the top down.
    let &(best, counts) = (judged.iter().rev())
        .filter(|(_, j)| within(j))
        .max_by_key(|(_, j)| (j.right_pairs, std::cmp::Reverse(j.false_merges)))?;
    let given = judged.first()?.0.distinct;
    let passed_over = (judged.iter())
        .filter(|(_, j)| !within(j) && j.right_pairs > counts.right_pairs)
        .map(|(step, j)| PassedOver {
            step: step.name.clone(),
            right_pairs: j.right_pairs,
            false_merges: j.false_merges,
        })
        .collect();
    Some(Recommendation {
        step: best.name.clone(),
        max_false_merges,
        precision: counts.precision(),
        recall: counts.recall(),
        right_pairs: counts.right_pairs,
        false_merges: counts.false_merges,
        distinct: best.distinct,
        saved: given.saturating_sub(best.distinct),
        passed_over,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Rung;
    use crate::report::ladder::{Evidence, StepKind};

    fn step(name: &str, distinct: u64, right_pairs: u64, false_merges: u64) -> StepReport {
        StepReport {
            kind: StepKind::Rung(Rung::String),
            name: name.into(),
            over: None,
            distinct,
            collapsed: 0,
            rejected: 0,
            seconds: 0.0,
            examples: Vec::new(),
            evidence: Some(Evidence {
                counts: Judgement {
                    merged_pairs: right_pairs + false_merges,
                    right_pairs,
                    same_pairs: 10,
                    false_merges,
                    ..Judgement::default()
                },
                false_examples: Vec::new(),
                missed_examples: Vec::new(),
            }),
        }
    }

    #[test]
    fn the_most_right_merges_within_the_tolerance() {
        let steps = [
            step("as-given", 100, 0, 0),
            step("syntax", 90, 3, 0),
            step("protocol:safe", 80, 6, 0),
            step("protocol:aggressive", 70, 9, 2),
        ];
        let chosen = recommend(&steps, 0).unwrap();
        assert_eq!(chosen.step, "protocol:safe");
        assert_eq!(
            (chosen.saved, chosen.right_pairs, chosen.recall),
            (20, 6, Some(0.6))
        );
        let why_not = &chosen.passed_over;
        assert_eq!(why_not.len(), 1);
        assert_eq!(
            (why_not[0].step.as_str(), why_not[0].false_merges),
            ("protocol:aggressive", 2)
        );
        assert_eq!(recommend(&steps, 2).unwrap().step, "protocol:aggressive");
    }

    #[test]
    fn a_tie_goes_to_fewer_false_merges_then_to_the_lower_step() {
        let steps = [
            step("as-given", 10, 0, 0),
            step("scheme", 9, 4, 1),
            step("protocol:safe", 9, 4, 0),
            step("protocol:safe+rules", 9, 4, 0),
        ];
        assert_eq!(recommend(&steps, 1).unwrap().step, "protocol:safe");
        // Nothing merges right: the lines as given.
        let none = [step("as-given", 5, 0, 0), step("scheme", 4, 0, 1)];
        assert_eq!(recommend(&none, 0).unwrap().step, "as-given");
    }

    #[test]
    fn unjudged_steps_have_no_recommendation() {
        let mut steps = vec![step("as-given", 5, 0, 0)];
        steps[0].evidence = None;
        assert!(recommend(&steps, 0).is_none());
    }
}
