//! The example merges a step shows: its largest classes new at it (two
//! spellings the step below kept apart, its key) and what joined them: the
//! rules, transforms or site rules of the step that changed them. Keys and
//! spellings are shown with passwords masked.
//!
//! It knows class tables, steps and how to read a line back; nothing of
//! the passes that filled the tables.

use super::classes::{Class, Classes, NO_OTHER};
use super::lines::{LineStore, Reading};
use super::steps::Step;
use super::{Merge, StepKind};
use crate::normalize::protocol::Transform;
use crate::normalize::{Normalizer, Scratch};
use crate::pipeline::place::Place;
use crate::uri::mask_password;

/// The `n` largest classes new at `step`, largest first, earliest first on a
/// tie; their lines are in `lines` (the table's own, or for a protocol
/// step the scheme rung's).
pub(super) fn examples(
    table: &Classes,
    lines: &LineStore,
    reading: &Reading<'_, '_>,
    step: &Step,
    below: Option<&Step>,
    n: usize,
) -> Vec<Merge> {
    let Some(below) = below else {
        return Vec::new();
    };
    let mut merged: Vec<(&Class, Place)> = table
        .map
        .values()
        .filter(|c| c.other != NO_OTHER)
        .map(|c| (c, c.other))
        .collect();
    // Classes have distinct first lines, so the order is total.
    let order = |(c, _): &(&Class, Place)| (std::cmp::Reverse(c.size), c.first);
    if merged.len() > n {
        merged.select_nth_unstable_by_key(n, order);
        merged.truncate(n);
    }
    merged.sort_unstable_by_key(order);
    merged
        .into_iter()
        .map(|(class, other)| {
            let spellings = spellings([class.first, other], lines, reading);
            let mut joined_by: Vec<String> = Vec::new();
            for spelling in &spellings {
                for reason in reasons(step, below, spelling) {
                    if !joined_by.contains(&reason) {
                        joined_by.push(reason);
                    }
                }
            }
            let joined_by = joiners(step, &spellings, joined_by);
            merge(class.size, &spellings, &step.normalizer, joined_by)
        })
        .collect()
}

/// The URIs of the lines at `places` as they entered the ladder (a column,
/// repaired, resolved).
pub(super) fn spellings(
    places: [Place; 2],
    lines: &LineStore,
    reading: &Reading<'_, '_>,
) -> Vec<Vec<u8>> {
    places
        .into_iter()
        .map(|place| reading.spelling(place, lines))
        .collect()
}

/// A merge of `size` lines, its key `normalizer`'s form of the first
/// spelling; passwords masked.
pub(super) fn merge(
    size: u64,
    spellings: &[Vec<u8>],
    normalizer: &Normalizer,
    joined_by: Vec<String>,
) -> Merge {
    let key = normalizer
        .normalize(&String::from_utf8_lossy(&spellings[0]))
        .unwrap_or_default();
    Merge {
        size,
        key: mask_password(&key),
        spellings: spellings
            .iter()
            .map(|s| mask_password(&String::from_utf8_lossy(s)))
            .collect(),
        joined_by,
    }
}

/// Of the transforms named in `joined_by`, those without which the two
/// `spellings` would keep two keys at `step`: a transform that changed
/// both alike (`https-upgrade` on an all-http crawl) did not join them.
/// The other names (the rung's rules, site rules) stay, and so does every
/// transform when none alone keeps the spellings apart (two that each
/// would have joined them).
fn joiners(step: &Step, spellings: &[Vec<u8>], joined_by: Vec<String>) -> Vec<String> {
    let Some(protocol) = step
        .normalizer
        .protocol()
        .filter(|_| step.normalizer.rules().is_none())
    else {
        return joined_by;
    };
    let apart_without = |transform: Transform| {
        let mut fewer = protocol.clone();
        fewer.remove(transform);
        let without = Normalizer::with_protocol(fewer);
        let keys: Vec<_> = (spellings.iter())
            .map(|s| without.normalize(&String::from_utf8_lossy(s)).ok())
            .collect();
        keys.windows(2).any(|pair| pair[0] != pair[1])
    };
    let transform_of = |name: &str| Transform::ALL.into_iter().find(|t| t.name() == name);
    let needed: Vec<bool> = (joined_by.iter())
        .map(|name| transform_of(name).is_some_and(apart_without))
        .collect();
    if !needed.contains(&true) {
        return joined_by;
    }
    (joined_by.into_iter().zip(needed))
        .filter(|(name, needed)| *needed || transform_of(name).is_none())
        .map(|(name, _)| name)
        .collect()
}

/// The names of what `step` changed in `uri` beyond `below`.
fn reasons(step: &Step, below: &Step, uri: &[u8]) -> Vec<String> {
    let (mut out, mut fired, mut scratch) = (Vec::new(), Vec::new(), Scratch::default());
    let Ok(changes) = step
        .normalizer
        .normalize_traced(uri, &mut out, &mut fired, &mut scratch)
    else {
        return Vec::new();
    };
    let below_changes = below
        .normalizer
        .normalize_into(uri, &mut Vec::new(), &mut scratch)
        .ok();
    let rung = step.normalizer.rung();
    let mut names: Vec<String> = changes
        .rules()
        .filter(|r| r.rung() == rung)
        .map(|r| r.description().to_string())
        .collect();
    names.extend(
        changes
            .transforms()
            .filter(|t| below_changes.is_none_or(|b| !b.transforms().any(|u| u == *t)))
            .map(|t| t.name().to_string()),
    );
    if let Some(rules) = step
        .normalizer
        .rules()
        .filter(|_| matches!(step.kind, StepKind::Rules(_)))
    {
        names.extend(fired.iter().map(|&rule| rules.label(rule).to_string()));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::super::testing::{LINES, report_of};
    use super::super::{Options, steps};
    use super::*;
    use crate::normalize::Rung;

    #[test]
    fn a_steps_largest_merges_come_first_each_with_what_joined_it() {
        let report = report_of(LINES, &Options::default());
        let shown = |m: &Merge| {
            (
                m.size,
                m.key.clone(),
                m.spellings.clone(),
                m.joined_by.clone(),
            )
        };
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let syntax: Vec<_> = report.steps[1].examples.iter().map(shown).collect();
        assert_eq!(
            syntax,
            [
                (
                    2,
                    "http://a.com/x".to_string(),
                    owned(&["http://a.com/x", "HTTP://a.com/x"]),
                    owned(&["lower-cased the scheme (§3.1, §6.2.2.1)"])
                ),
                (
                    2,
                    "http://a.com/~x".to_string(),
                    owned(&["http://a.com/%7Ex", "http://a.com/~x"]),
                    owned(&["decoded percent-encoded unreserved characters (§6.2.2.2)"])
                ),
            ]
        );
        let aggressive = &report.steps[4].examples[0];
        assert_eq!(
            (aggressive.size, aggressive.key.as_str()),
            (4, "https://a.com/x")
        );
        // Both spellings are http: https-upgrade changed them alike.
        assert_eq!(
            aggressive.spellings,
            ["http://a.com/x", "http://www.a.com/x"]
        );
        assert_eq!(aggressive.joined_by, ["strip-www"]);
        // The string rung is over nothing: it shows no merge.
        assert!(report.steps[0].examples.is_empty());
    }

    #[test]
    fn a_reason_is_what_the_step_changed_beyond_the_one_below() {
        let steps = steps(&Options::default());
        let (safe, aggressive) = (&steps[3], &steps[4]);
        assert_eq!(
            reasons(&steps[2], &steps[1], b"http://a.com:80/x"),
            ["dropped the scheme's default port (§6.2.3)"]
        );
        // In the order they were made.
        assert_eq!(
            reasons(aggressive, safe, b"http://www.a.com/x"),
            ["strip-www", "https-upgrade"]
        );
        assert!(reasons(aggressive, safe, b"not a uri").is_empty());
    }

    #[test]
    fn a_transform_that_changed_both_spellings_alike_did_not_join_them() {
        let steps = steps(&Options::default());
        let aggressive = &steps[4];
        let named = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let both_http = [b"http://www.a.com/x".to_vec(), b"http://a.com/x".to_vec()];
        let by = named(&["strip-www", "https-upgrade"]);
        assert_eq!(joiners(aggressive, &both_http, by.clone()), ["strip-www"]);
        // Each of two is needed: both stay.
        let apart = [b"http://www.a.com/x".to_vec(), b"https://a.com/x".to_vec()];
        assert_eq!(
            joiners(aggressive, &apart, by),
            ["strip-www", "https-upgrade"]
        );
        // Whatever the transform's place in the list.
        let either = [b"http://a.com/x/".to_vec(), b"http://a.com/x".to_vec()];
        let slash = named(&["trailing-slash=remove", "https-upgrade"]);
        assert_eq!(
            joiners(aggressive, &either, slash),
            ["trailing-slash=remove"]
        );
        // A rung's own rules are not transforms: they stay.
        let rung = named(&["lower-cased the scheme (§3.1, §6.2.2.1)"]);
        assert_eq!(joiners(&steps[1], &both_http, rung.clone()), rung);
    }

    #[test]
    fn a_merge_shows_no_password() {
        let spellings = [
            b"HTTP://u:secret@a.com/".to_vec(),
            b"http://u:secret@a.com/".to_vec(),
        ];
        let merge = merge(2, &spellings, &Normalizer::new(Rung::Syntax), Vec::new());
        assert_eq!(merge.key, "http://u:****@a.com/");
        assert_eq!(
            merge.spellings,
            ["HTTP://u:****@a.com/", "http://u:****@a.com/"]
        );
    }
}
