//! The captures of a run and the contents they make: each URL (numbered
//! in the order of its first capture) with its lines and the digests it
//! served, grouped by shared digests into contents (a union-find over the
//! graph of URLs and digests). A redirect joins the URL it redirects from
//! to its target's content, once the target is a URL.
//!
//! It knows URLs, fingerprints of spellings and digest hashes; nothing of
//! steps or how they are judged (a [`Level`](super::Level)'s work).

use std::collections::HashMap;

use voracious_radix_sort::{RadixSort, Radixable};

use super::{Judgement, Keyed, Level, Print, UrlId, pairs};
use crate::pipeline::hash::PrintHasher;

/// A URL that served a digest (by its hash), ordered by the digest, then
/// the URL.
#[derive(Clone, Copy, PartialEq, PartialOrd)]
struct Served {
    digest: u64,
    url: UrlId,
}

impl Radixable<u128> for Served {
    type Key = u128;
    fn key(&self) -> u128 {
        (u128::from(self.digest) << 32) | u128::from(self.url)
    }
}

/// A spelling's place in the index before any capture of content made it
/// a URL.
const NO_URL: UrlId = UrlId::MAX;

/// A redirect met, not yet settled: from the spelling `own` to the
/// spelling `target`, on `lines` lines.
struct Redirect {
    own: Print,
    target: Print,
    lines: u64,
}

/// The longest chain of redirects followed to a URL: the redirects a
/// browser follows (the Fetch standard's limit).
const MAX_REDIRECTS: usize = 20;

/// The captures of a run as they are read: each URL once (by the
/// fingerprint of its own spelling) with the lines it was on, and the
/// digests it served; and every spelling met, captured or not.
#[derive(Default)]
pub struct Captures {
    own: Vec<Print>,
    lines: Vec<u64>,
    /// Each spelling's URL, or [`NO_URL`] until a capture of it comes.
    index: HashMap<Print, UrlId, PrintHasher>,
    /// Each line's URL and digest; repeats are dropped by [`Captures::contents`].
    served: Vec<Served>,
    /// Redirects met and not yet settled.
    redirects: Vec<Redirect>,
    /// URLs a settled redirect joins: from, to.
    links: Vec<(UrlId, UrlId)>,
}

impl Captures {
    /// Records one capture: the URL whose spelling has fingerprint `own`
    /// served content with digest hash `digest`. Returns the URL's number
    /// and whether this is its first capture.
    pub fn add(&mut self, own: Print, digest: u64) -> (UrlId, bool) {
        self.add_lines(own, digest, 1)
    }

    /// Records `lines` captures of one URL that served one digest (as
    /// [`Captures::add`] does each).
    pub fn add_lines(&mut self, own: Print, digest: u64, lines: u64) -> (UrlId, bool) {
        let (id, first) = self.url_on(own, lines);
        let served = Served { digest, url: id };
        if self.served.last() != Some(&served) {
            self.served.push(served);
        }
        (id, first)
    }

    /// The URL of the spelling `own`, made one if it is not yet, with
    /// `lines` more lines; and whether it was made now.
    fn url_on(&mut self, own: Print, lines: u64) -> (UrlId, bool) {
        let id = self.index.entry(own).or_insert(NO_URL);
        let first = *id == NO_URL;
        if first {
            *id = self.own.len() as UrlId;
            self.own.push(own);
            self.lines.push(0);
        }
        let id = *id;
        self.lines[id as usize] += lines;
        (id, first)
    }

    /// Records `lines` lines of a redirect from the spelling `own` to the
    /// spelling `target` (fingerprinted as [`Captures::add`]'s are). It
    /// counts among the spellings; it is evidence once its target is a URL
    /// ([`Captures::settle_redirects`]).
    pub fn add_redirect(&mut self, own: Print, target: Print, lines: u64) {
        self.add_spelling(own);
        self.redirects.push(Redirect { own, target, lines });
    }

    /// Settles the redirects recorded: each whose target is a URL (one
    /// captured, or one a redirect settled before it made: a chain is
    /// followed up to 20 long, as browsers follow them) joins the URL it redirects
    /// from, made one if need be, to its target's content; the rest are
    /// dropped, for no content is known of them. Calls `new_url(r)` for
    /// each redirect `r` (numbered in the order added) that made a URL, in
    /// the order of the URLs' numbers. Returns the lines of the redirects
    /// settled.
    ///
    /// ```
    /// use urinorm::report::evidence::Captures;
    /// let mut captures = Captures::default();
    /// captures.add(1, 7);
    /// // 3 redirects to 2, which redirects to 1; 9 to nothing captured.
    /// captures.add_redirect(3, 2, 1);
    /// captures.add_redirect(2, 1, 1);
    /// captures.add_redirect(9, 8, 1);
    /// let mut made = Vec::new();
    /// assert_eq!(captures.settle_redirects(|r| made.push(r)), 2);
    /// assert_eq!(made, [1, 0]);
    /// let contents = captures.contents();
    /// assert_eq!((contents.urls(), contents.len()), (3, 1));
    /// ```
    pub fn settle_redirects(&mut self, mut new_url: impl FnMut(usize)) -> u64 {
        let redirects = std::mem::take(&mut self.redirects);
        let mut settled = vec![false; redirects.len()];
        let mut lines = 0;
        for _ in 0..MAX_REDIRECTS {
            let mut progress = false;
            for (r, redirect) in redirects.iter().enumerate() {
                let to = self.index.get(&redirect.target).copied();
                let Some(to) = to.filter(|&to| to != NO_URL && !settled[r]) else {
                    continue;
                };
                let (from, made) = self.url_on(redirect.own, redirect.lines);
                if made {
                    new_url(r);
                }
                self.links.push((from, to));
                settled[r] = true;
                lines += redirect.lines;
                progress = true;
            }
            if !progress {
                break;
            }
        }
        lines
    }

    /// Records a spelling met on a line that is no capture of content (a
    /// 404, a redirect): it counts among the [`Captures::spellings`], and
    /// becomes a URL only if a capture of it follows.
    pub fn add_spelling(&mut self, own: Print) {
        self.index.entry(own).or_insert(NO_URL);
    }

    /// The distinct spellings met so far, captures of content or not.
    pub fn spellings(&self) -> usize {
        self.index.len()
    }

    /// Makes room for `spellings` more at once, rather than growing the
    /// table step by step (each step rehashes it into fresh pages). A guess
    /// too large for memory is no error: the table then grows as it would.
    pub fn reserve(&mut self, spellings: usize) {
        let _ = self.index.try_reserve(spellings);
    }

    /// The URLs captured so far.
    pub fn urls(&self) -> usize {
        self.own.len()
    }

    /// The URLs grouped into contents.
    pub fn contents(self) -> Contents {
        // The index served `add`; a level finds keys by its own order.
        let Captures {
            own,
            lines,
            index: _,
            mut served,
            redirects: _,
            links,
        } = self;
        let urls = own.len();
        // Digest hashes are uniform over their bits, as fingerprints are.
        served.voracious_sort();
        served.dedup();
        let mut digests = vec![0u32; urls];
        let mut groups = UnionFind::new(urls);
        for same in served.chunk_by(|a, b| a.digest == b.digest) {
            for &Served { url, .. } in same {
                digests[url as usize] += 1;
                groups.join(same[0].url, url);
            }
        }
        drop(served);
        for (from, to) in links {
            groups.join(from, to);
        }
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
        let same_pairs = size.iter().map(|&n| pairs(u64::from(n))).sum();
        Contents {
            own,
            lines,
            content,
            digests,
            size,
            starts,
            members,
            same_pairs,
        }
    }
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
    pub(super) own: Vec<Print>,
    pub(super) lines: Vec<u64>,
    pub(super) content: Vec<u32>,
    digests: Vec<u32>,
    /// URLs per content.
    size: Vec<u32>,
    /// The URLs of content `c` are `members[starts[c]..starts[c + 1]]`, earliest first.
    starts: Vec<u32>,
    members: Vec<UrlId>,
    pub(super) same_pairs: u64,
}

impl Contents {
    /// How many URLs there are.
    pub fn urls(&self) -> usize {
        self.own.len()
    }

    /// How many captures the URLs were on, all together.
    pub fn captures(&self) -> u64 {
        self.lines.iter().sum()
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
    pub fn own(&self, url: UrlId) -> Print {
        self.own[url as usize]
    }

    /// The content of URL `url`.
    pub fn content(&self, url: UrlId) -> u32 {
        self.content[url as usize]
    }

    /// The earliest URL of content `c`.
    pub fn first_url(&self, c: u32) -> UrlId {
        self.members_of(c)[0]
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
    /// use urinorm::report::evidence::{Captures, REJECTED};
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
    pub fn judge(&self, key: impl Fn(UrlId) -> Print, examples: usize) -> Judgement {
        let level = Level::of_urls(self);
        let changed = (0..self.urls() as UrlId)
            .filter_map(|u| {
                let k = key(u);
                (k != self.own[u as usize]).then_some(Keyed { key: k, unit: u })
            })
            .collect();
        level.judge(self, changed, key, examples)
    }

    /// The URLs of content `c`, earliest first.
    pub fn members_of(&self, c: u32) -> &[UrlId] {
        &self.members[self.starts[c as usize] as usize..self.starts[c as usize + 1] as usize]
    }
}

/// The contents of captures of (own spelling, digest), in order.
#[cfg(test)]
pub(super) fn of_captures(captures: &[(Print, u64)]) -> Contents {
    let mut all = Captures::default();
    for &(own, digest) in captures {
        all.add(own, digest);
    }
    all.contents()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pages_changes_are_one_content_and_a_chain_joins_urls() {
        // URL 10 changed (digests 1 then 2); 11 served 1, 12 served 2: one
        // content through 10. 13 served 3 alone.
        let c = of_captures(&[(10, 1), (11, 1), (10, 2), (12, 2), (13, 3), (10, 2)]);
        assert_eq!((c.urls(), c.len(), c.changing()), (4, 2, 1));
        assert_eq!(c.same_pairs, 3);
        assert_eq!(c.lines, vec![3, 1, 1, 1]);
    }

    #[test]
    fn a_spelling_without_content_is_counted_and_becomes_a_url_once_captured() {
        let mut captures = Captures::default();
        captures.reserve(4);
        captures.add_spelling(20);
        captures.add_spelling(21);
        assert_eq!((captures.spellings(), captures.urls()), (2, 0));
        // 21 is captured later: it is the first URL; 22 the second.
        assert_eq!(captures.add(21, 5), (0, true));
        assert_eq!(captures.add(22, 5), (1, true));
        captures.add_spelling(22);
        assert_eq!(captures.add(21, 6), (0, false));
        assert_eq!((captures.spellings(), captures.urls()), (3, 2));
        let c = captures.contents();
        assert_eq!((c.urls(), c.len(), c.own(0), c.own(1)), (2, 1, 21, 22));
    }

    #[test]
    fn a_content_lists_its_urls_earliest_first() {
        // URLs 0 and 2 share digest 1; URL 1 served 2.
        let c = of_captures(&[(10, 1), (11, 2), (12, 1)]);
        assert_eq!((c.content(0), c.content(1), c.content(2)), (0, 1, 0));
        assert_eq!(c.members_of(0), [0, 2]);
        assert_eq!((c.first_url(1), c.captures(), c.digests(0)), (1, 3, 1));
    }
}
