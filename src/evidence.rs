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
//! nothing of lines, files or how a key is made.

use std::collections::HashMap;

use crate::pipeline::hash::PrintHasher;

/// A URL's fingerprint at a step; [`REJECTED`] where the step rejects it.
pub type Key = u128;

/// The key of a URL a step rejects: it is in no class.
pub const REJECTED: Key = 0;

/// A URL, numbered in the order of its first capture.
pub type UrlId = u32;

/// The captures of a run as they are read: each URL once (by the
/// fingerprint of its own spelling) with the lines it was on, and the
/// digests it served.
#[derive(Default)]
pub struct Captures {
    own: Vec<Key>,
    lines: Vec<u64>,
    index: HashMap<Key, UrlId, PrintHasher>,
    /// (URL, digest) for every line; repeats are dropped by [`Captures::contents`].
    served: Vec<(UrlId, u64)>,
}

impl Captures {
    /// Records one capture: the URL whose spelling has fingerprint `own`
    /// served content with digest hash `digest`. Returns the URL's number
    /// and whether this is its first capture.
    pub fn add(&mut self, own: Key, digest: u64) -> (UrlId, bool) {
        let next = self.own.len() as UrlId;
        let id = *self.index.entry(own).or_insert(next);
        let first = id == next;
        if first {
            self.own.push(own);
            self.lines.push(0);
        }
        self.lines[id as usize] += 1;
        if self.served.last() != Some(&(id, digest)) {
            self.served.push((id, digest));
        }
        (id, first)
    }

    /// The URLs captured so far.
    pub fn urls(&self) -> usize {
        self.own.len()
    }

    /// The URLs grouped into contents.
    pub fn contents(self) -> Contents {
        let Captures {
            own,
            lines,
            index,
            mut served,
        } = self;
        let urls = own.len();
        served.sort_unstable_by_key(|&(url, digest)| (digest, url));
        served.dedup();
        let mut digests = vec![0u32; urls];
        let mut groups = UnionFind::new(urls);
        for pair in served.chunk_by(|a, b| a.1 == b.1) {
            for &(url, _) in pair {
                digests[url as usize] += 1;
                groups.join(pair[0].0, url);
            }
        }
        drop(served);
        // Contents numbered in the order of their first URL.
        let mut number = vec![u32::MAX; urls];
        let mut content = Vec::with_capacity(urls);
        let mut size: Vec<u32> = Vec::new();
        for url in 0..urls as UrlId {
            let root = groups.root(url) as usize;
            if number[root] == u32::MAX {
                number[root] = size.len() as u32;
                size.push(0);
            }
            let c = number[root];
            size[c as usize] += 1;
            content.push(c);
        }
        drop(groups);
        let mut starts = Vec::with_capacity(size.len() + 1);
        let mut at = 0u32;
        for &n in &size {
            starts.push(at);
            at += n;
        }
        starts.push(at);
        let mut members = vec![0; urls];
        let mut fill = starts.clone();
        for (url, &c) in content.iter().enumerate() {
            members[fill[c as usize] as usize] = url as UrlId;
            fill[c as usize] += 1;
        }
        let mut by_size: Vec<u32> = (0..size.len() as u32)
            .filter(|&c| size[c as usize] > 1)
            .collect();
        by_size.sort_by_key(|&c| std::cmp::Reverse(size[c as usize]));
        let same_pairs = size.iter().map(|&n| pairs(u64::from(n))).sum();
        let (missed, surplus) = size
            .iter()
            .filter(|&&n| n > 1)
            .fold((0, 0), |(m, s), &n| (m + 1, s + u64::from(n) - 1));
        Contents {
            own,
            lines,
            index,
            content,
            digests,
            size,
            starts,
            members,
            by_size,
            same_pairs,
            missed,
            surplus,
        }
    }
}

/// The pairs among `n`.
fn pairs(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// Disjoint sets of URLs, joined by shared digests.
struct UnionFind {
    parent: Vec<UrlId>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as UrlId).collect(),
        }
    }

    fn root(&mut self, mut x: UrlId) -> UrlId {
        while self.parent[x as usize] != x {
            // Path halving: each step points a node at its grandparent.
            let grand = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grand;
            x = grand;
        }
        x
    }

    /// Joins the sets of `a` and `b` under the smaller root (so a set's root
    /// is its earliest URL).
    fn join(&mut self, a: UrlId, b: UrlId) {
        let (a, b) = (self.root(a), self.root(b));
        let (low, high) = (a.min(b), a.max(b));
        self.parent[high as usize] = low;
    }
}

/// The URLs of a run, each with its content, and what the run looks like
/// before any step merges anything (every URL a class of its own).
pub struct Contents {
    own: Vec<Key>,
    lines: Vec<u64>,
    index: HashMap<Key, UrlId, PrintHasher>,
    content: Vec<u32>,
    digests: Vec<u32>,
    /// URLs per content.
    size: Vec<u32>,
    /// The URLs of content `c` are `members[starts[c]..starts[c + 1]]`, earliest first.
    starts: Vec<u32>,
    members: Vec<UrlId>,
    /// The contents of more than one URL, most URLs first (earliest first
    /// on a tie).
    by_size: Vec<u32>,
    same_pairs: u64,
    missed: u64,
    surplus: u64,
}

/// How one step's merges compare with the contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    pub false_examples: Vec<FalseMerge>,
    /// The contents under most keys, most first.
    pub missed_examples: Vec<MissedMerge>,
}

impl Judgement {
    /// Right merged pairs ÷ merged pairs; `None` when the step merges none.
    pub fn precision(&self) -> Option<f64> {
        (self.merged_pairs > 0).then(|| self.right_pairs as f64 / self.merged_pairs as f64)
    }

    /// Right merged pairs ÷ pairs that are one content; `None` when no two
    /// URLs are one content.
    pub fn recall(&self) -> Option<f64> {
        (self.same_pairs > 0).then(|| self.right_pairs as f64 / self.same_pairs as f64)
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

impl Contents {
    /// How many URLs there are.
    pub fn urls(&self) -> usize {
        self.own.len()
    }

    /// How many contents there are.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// Whether no URL was captured.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// The fingerprint of URL `url`'s own spelling.
    pub fn own(&self, url: UrlId) -> Key {
        self.own[url as usize]
    }

    /// How many digests URL `url` served.
    pub fn digests(&self, url: UrlId) -> u32 {
        self.digests[url as usize]
    }

    /// How many URLs served more than one digest.
    pub fn changing(&self) -> usize {
        self.digests.iter().filter(|&&d| d > 1).count()
    }

    /// Judges the step that gives URL `u` the key `key(u)`, with up to
    /// `examples` examples of each kind.
    ///
    /// ```
    /// use urinorm::evidence::{Captures, REJECTED};
    /// let mut captures = Captures::default();
    /// // URLs 1 and 2 serve digest 7; URL 3 serves 8.
    /// for (own, digest) in [(1, 7), (2, 7), (3, 8)] {
    ///     captures.add(own, digest);
    /// }
    /// let contents = captures.contents();
    /// // A step that gives all three one key: one pair right, two wrong.
    /// let all = contents.judge(|_| 99, 1);
    /// assert_eq!((all.merged_pairs, all.right_pairs, all.false_merges), (3, 1, 1));
    /// // The step that changes nothing misses the pair.
    /// let none = contents.judge(|u| contents.own(u), 1);
    /// assert_eq!((none.missed, none.recall()), (1, Some(0.0)));
    /// # let _ = REJECTED;
    /// ```
    pub fn judge(&self, key: impl Fn(UrlId) -> Key, examples: usize) -> Judgement {
        let urls = self.urls();
        let mut changed: Vec<(Key, UrlId)> = (0..urls as UrlId)
            .filter_map(|u| {
                let k = key(u);
                (k != self.own[u as usize]).then_some((k, u))
            })
            .collect();
        changed.sort_unstable();
        let mut moved = vec![false; urls];
        for &(_, u) in &changed {
            moved[u as usize] = true;
        }
        let mut judgement = Judgement {
            same_pairs: self.same_pairs,
            missed: self.missed,
            missed_keys: self.surplus,
            ..Judgement::default()
        };
        // Keys each content gains (a rejection) or loses (a merge).
        let mut keys_delta: HashMap<u32, i64, PrintHasher> = HashMap::default();
        let mut false_merges = Vec::new();
        let mut members: Vec<(u32, UrlId)> = Vec::new();
        for class in changed.chunk_by(|a, b| a.0 == b.0) {
            if class[0].0 == REJECTED {
                for &(_, u) in class {
                    *keys_delta.entry(self.content[u as usize]).or_default() -= 1;
                }
                continue;
            }
            members.clear();
            members.extend(class.iter().map(|&(_, u)| (self.content[u as usize], u)));
            // The URL whose own spelling is the key, if the step leaves it be.
            if let Some(&u) = self.index.get(&class[0].0)
                && !moved[u as usize]
            {
                members.push((self.content[u as usize], u));
            }
            if members.len() < 2 {
                continue;
            }
            members.sort_unstable();
            judgement.merged_pairs += pairs(members.len() as u64);
            let mut first_of_each = Vec::new();
            for same in members.chunk_by(|a, b| a.0 == b.0) {
                let n = same.len() as u64;
                judgement.right_pairs += pairs(n);
                if n > 1 {
                    *keys_delta.entry(same[0].0).or_default() -= n as i64 - 1;
                }
                first_of_each.push(same[0].1);
            }
            if first_of_each.len() > 1 {
                let lines = members.iter().map(|&(_, u)| self.lines[u as usize]).sum();
                judgement.false_merges += 1;
                judgement.false_lines += lines;
                first_of_each.sort_unstable();
                false_merges.push(FalseMerge {
                    lines,
                    contents: first_of_each.len() as u64,
                    urls: first_of_each,
                });
            }
        }
        let mut keys_now: Vec<(u32, u64)> = Vec::with_capacity(keys_delta.len());
        for (&c, &delta) in &keys_delta {
            let before = u64::from(self.size[c as usize]);
            let now = (before as i64 + delta) as u64;
            if before > 1 {
                judgement.missed -= 1;
                judgement.missed_keys -= before - 1;
            }
            if now > 1 {
                judgement.missed += 1;
                judgement.missed_keys += now - 1;
            }
            keys_now.push((c, now));
        }
        judgement.false_examples = largest_false(false_merges, examples);
        judgement.missed_examples = self.largest_missed(keys_now, &keys_delta, &key, examples);
        judgement
    }

    /// The `n` contents under most keys, most first (earliest first on a
    /// tie), each with its earliest URL under each of its first keys.
    /// `touched` are the contents whose keys the step changed, with their
    /// keys now; every other content has as many keys as URLs.
    fn largest_missed(
        &self,
        mut touched: Vec<(u32, u64)>,
        changed: &HashMap<u32, i64, PrintHasher>,
        key: &impl Fn(UrlId) -> Key,
        n: usize,
    ) -> Vec<MissedMerge> {
        let first = |c: u32| self.members[self.starts[c as usize] as usize];
        let order = |&(c, keys): &(u32, u64)| (std::cmp::Reverse(keys), first(c));
        touched.retain(|&(_, keys)| keys > 1);
        touched.sort_unstable_by_key(order);
        touched.truncate(n);
        let untouched = self
            .by_size
            .iter()
            .filter(|c| !changed.contains_key(c))
            .take(n)
            .map(|&c| (c, u64::from(self.size[c as usize])));
        let mut largest: Vec<(u32, u64)> = touched.into_iter().chain(untouched).collect();
        largest.sort_unstable_by_key(order);
        largest.truncate(n);
        largest
            .into_iter()
            .map(|(c, keys)| {
                let span = self.starts[c as usize] as usize..self.starts[c as usize + 1] as usize;
                let mut seen: Vec<Key> = Vec::new();
                let mut urls = Vec::new();
                for &u in &self.members[span] {
                    let k = key(u);
                    if k != REJECTED && !seen.contains(&k) {
                        seen.push(k);
                        urls.push(u);
                        if urls.len() == SHOWN_URLS {
                            break;
                        }
                    }
                }
                MissedMerge { keys, urls }
            })
            .collect()
    }
}

/// The `n` false merges with most lines, earliest first on a tie, each
/// naming at most [`SHOWN_URLS`] URLs.
fn largest_false(mut all: Vec<FalseMerge>, n: usize) -> Vec<FalseMerge> {
    let order = |m: &FalseMerge| (std::cmp::Reverse(m.lines), m.urls[0]);
    if all.len() > n {
        all.select_nth_unstable_by_key(n, order);
        all.truncate(n);
    }
    all.sort_unstable_by_key(order);
    for merge in &mut all {
        merge.urls.truncate(SHOWN_URLS);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captures of (own spelling, digest), in order.
    fn contents(captures: &[(Key, u64)]) -> Contents {
        let mut all = Captures::default();
        for &(own, digest) in captures {
            all.add(own, digest);
        }
        all.contents()
    }

    /// The judgement, by brute force over every pair: the oracle.
    fn naive(contents: &Contents, key: &dyn Fn(UrlId) -> Key) -> (u64, u64, u64, u64, u64) {
        let n = contents.urls() as UrlId;
        let (mut merged, mut right, mut same) = (0, 0, 0);
        for a in 0..n {
            for b in a + 1..n {
                let one = contents.content[a as usize] == contents.content[b as usize];
                same += u64::from(one);
                if key(a) != REJECTED && key(a) == key(b) {
                    merged += 1;
                    right += u64::from(one);
                }
            }
        }
        let mut classes: HashMap<Key, Vec<u32>> = HashMap::new();
        let mut keys: HashMap<u32, Vec<Key>> = HashMap::new();
        for u in 0..n {
            let c = contents.content[u as usize];
            if key(u) != REJECTED {
                classes.entry(key(u)).or_default().push(c);
                keys.entry(c).or_default().push(key(u));
            }
        }
        let false_merges = classes.into_values().filter(|cs| distinct(cs) > 1).count() as u64;
        let missed = keys.into_values().filter(|ks| distinct(ks) > 1).count() as u64;
        (merged, right, same, false_merges, missed)
    }

    /// How many distinct values `values` holds.
    fn distinct<T: Ord + Clone>(values: &[T]) -> usize {
        let mut values = values.to_vec();
        values.sort();
        values.dedup();
        values.len()
    }

    #[test]
    fn a_pages_changes_are_one_content_and_a_chain_joins_urls() {
        // URL 10 changed (digests 1 then 2); 11 served 1, 12 served 2: one
        // content through 10. 13 served 3 alone.
        let c = contents(&[(10, 1), (11, 1), (10, 2), (12, 2), (13, 3), (10, 2)]);
        assert_eq!((c.urls(), c.len(), c.changing()), (4, 2, 1));
        assert_eq!(c.same_pairs, 3);
        assert_eq!(c.lines, vec![3, 1, 1, 1]);
    }

    #[test]
    fn judgement_equals_the_pairwise_oracle() {
        let c = contents(&[
            (10, 1),
            (11, 1),
            (12, 2),
            (13, 2),
            (14, 3),
            (15, 1),
            (16, 4),
            (17, 4),
        ]);
        // Steps as maps from own spelling to key; unmapped keep their own.
        let steps: Vec<Vec<(Key, Key)>> = vec![
            vec![],
            vec![(11, 10), (13, 12)],
            vec![(11, 10), (12, 10), (14, 15)],
            vec![(11, REJECTED), (13, 99), (12, 99), (16, 17), (17, 16)],
            vec![(10, 15), (11, 15), (16, 14)],
        ];
        for map in steps {
            let key = |u: UrlId| {
                let own = c.own(u);
                map.iter().find(|(o, _)| *o == own).map_or(own, |&(_, k)| k)
            };
            let j = c.judge(key, 5);
            assert_eq!(
                (
                    j.merged_pairs,
                    j.right_pairs,
                    j.same_pairs,
                    j.false_merges,
                    j.missed
                ),
                naive(&c, &key),
                "{map:?}"
            );
            assert_eq!(j.false_examples.len() as u64, j.false_merges);
        }
    }

    proptest::proptest! {
        #[test]
        fn any_step_is_judged_as_the_oracle_judges(
            captures in proptest::collection::vec((1u128..24, 1u64..8), 1..40),
            step in proptest::collection::vec(0u128..10, 24),
        ) {
            let c = contents(&captures);
            // Own spellings 1..24 go to the step's key: itself, another
            // spelling, a shared key, or rejected (0).
            let key = |u: UrlId| match step[c.own(u) as usize] {
                0 => REJECTED,
                k if k < 5 => c.own(u),
                k => 100 + k % 3,
            };
            let j = c.judge(key, 3);
            proptest::prop_assert_eq!(
                (j.merged_pairs, j.right_pairs, j.same_pairs, j.false_merges, j.missed),
                naive(&c, &key)
            );
        }
    }

    #[test]
    fn examples_name_one_url_per_content_and_per_key() {
        let c = contents(&[(10, 1), (11, 2), (12, 1), (13, 1), (14, 5)]);
        // 10, 11 and 14 made one class: three contents.
        let j = c.judge(|u| if [0, 1, 4].contains(&u) { 7 } else { c.own(u) }, 5);
        assert_eq!(j.false_examples[0].urls, vec![0, 1, 4]);
        assert_eq!(j.false_examples[0].contents, 3);
        // Content of digest 1 (URLs 0, 2, 3): under keys 7, 12, 13.
        assert_eq!(j.missed_examples[0].urls, vec![0, 2, 3]);
        assert_eq!(j.missed_examples[0].keys, 3);
    }
}
