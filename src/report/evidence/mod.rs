//! Which merges are right, judged by the content each URL served: the
//! digests a crawl index records for its captures.
//!
//! URLs that served the same digest served the same content, and a URL
//! whose page changed over time served several digests that are still one
//! page: so a *content* is a connected group of the graph whose edges join
//! a URL to each digest it served (a URL's own digests are one content; two
//! URLs are one content when a chain of shared digests joins them). A step
//! that gives two URLs one key *merges* them; the merge is *right* when
//! they are one content. Over the pairs of distinct URLs:
//!
//! - precision = right merged pairs ÷ merged pairs;
//! - recall = right merged pairs ÷ pairs that are one content;
//! - a *false merge* is a class of the step holding more than one content;
//! - a *missed merge* is a content still under more than one key, and its
//!   surplus keys (keys − 1) are the fetches the step still wastes on it.
//!
//! A step is judged by the URLs whose keys differ from their own spelling's
//! fingerprint: every other URL is a class of its own (or joins one of
//! those), so the work is in proportion to what the step changes.
//!
//! It knows URLs as numbers, keys as fingerprints and digests as hashes;
//!
//! This file owns the public words of the judgement (keys, URLs, the
//! [`Judgement`] and its examples); [`Captures`] and [`Contents`] group the
//! URLs into contents, and a [`Level`] judges a step from them.

mod contents;
mod level;

use serde::{Deserialize, Serialize};

pub use contents::{Captures, Contents};
pub use level::Level;

/// A URL's fingerprint at a step, in memory
/// ([`InMemoryPrints`](crate::pipeline::hash::InMemoryPrints), never 0);
/// [`REJECTED`] where the step rejects it. The ladder's classes are named by
/// the same prints.
pub type Print = u128;

/// The key of a URL a step rejects: it is in no class.
pub const REJECTED: Print = 0;

/// A URL, numbered in the order of its first capture.
pub type UrlId = u32;

/// A unit of a [`Level`] (a URL, a class) with a key: what a level keeps in
/// key order, and what a step gives the units it changes.
///
/// ```
/// use urinorm::report::evidence::{Captures, Keyed, Level};
/// let mut captures = Captures::default();
/// for (own, digest) in [(1, 7), (2, 7)] {
///     captures.add(own, digest);
/// }
/// let contents = captures.contents();
/// let urls = Level::of_urls(&contents);
/// // A step that gives URL 1 the key of URL 0: one right merge.
/// let step = urls.judge(&contents, vec![Keyed { key: 1, unit: 1 }], |_| 1, 1);
/// assert_eq!((step.merged_pairs, step.right_pairs, step.missed), (1, 1, 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Keyed {
    /// The unit's key at the step.
    pub key: Print,
    /// The unit's number in its level (a URL's, at the level of URLs).
    pub unit: u32,
}

/// The pairs among `n`.
pub fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// `part ÷ whole`; `None` when `whole` is 0 (no pair to judge).
pub fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// How one step's merges compare with the contents. Its JSON form holds
/// the counts, not the examples, which name URLs by number.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    /// Pairs of distinct URLs the step gives one key.
    pub merged_pairs: u64,
    /// Of those, the pairs that are one content.
    pub right_pairs: u64,
    /// Pairs of distinct URLs that are one content (whatever the step).
    pub same_pairs: u64,
    /// Classes holding more than one content, and their lines.
    pub false_merges: u64,
    pub false_lines: u64,
    /// Contents under more than one key, and their keys beyond one each.
    pub missed: u64,
    pub missed_keys: u64,
    /// The largest false merges, most lines first.
    #[serde(skip)]
    pub false_examples: Vec<FalseMerge>,
    /// The contents under most keys, most first.
    #[serde(skip)]
    pub missed_examples: Vec<MissedMerge>,
}

impl Judgement {
    /// Right merged pairs ÷ merged pairs; `None` when the step merges none.
    pub fn precision(&self) -> Option<f64> {
        share(self.right_pairs, self.merged_pairs)
    }

    /// Right merged pairs ÷ pairs that are one content; `None` when no two
    /// URLs are one content.
    pub fn recall(&self) -> Option<f64> {
        share(self.right_pairs, self.same_pairs)
    }
}

/// A class that holds more than one content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FalseMerge {
    pub lines: u64,
    /// How many contents it holds.
    pub contents: u64,
    /// Its earliest URL of each content, earliest first (at most
    /// [`SHOWN_URLS`]).
    pub urls: Vec<UrlId>,
}

/// A content still under more than one key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissedMerge {
    pub keys: u64,
    /// Its earliest URL under each of its keys, earliest first (at most
    /// [`SHOWN_URLS`]).
    pub urls: Vec<UrlId>,
}

/// How many URLs an example names.
pub const SHOWN_URLS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_and_shares_are_counted_as_the_judgement_counts_them() {
        assert_eq!([0, 1, 2, 4].map(pairs), [0, 0, 1, 6]);
        assert_eq!((share(1, 4), share(1, 0)), (Some(0.25), None));
        let judgement = Judgement {
            merged_pairs: 4,
            right_pairs: 3,
            same_pairs: 0,
            ..Judgement::default()
        };
        assert_eq!(
            (judgement.precision(), judgement.recall()),
            (Some(0.75), None)
        );
    }
}
