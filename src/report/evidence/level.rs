//! A partition of the URLs into units (each URL alone, or a step's
//! classes), judged once, and the judgement of a step from it by what the
//! step changes: the units whose key is not their own, and the unit whose
//! own key they take. The work is in proportion to the change.
//!
//! It knows contents, keys and units; nothing of how a key is made or
//! where the URLs were read.

use voracious_radix_sort::{RadixSort, Radixable};

use super::{
    Contents, FalseMerge, Judgement, Keyed, MissedMerge, Print, REJECTED, SHOWN_URLS, UrlId, pairs,
};

/// A unit of a [`Level`] that holds more than one content.
const MIXED: u32 = u32::MAX;

// The radix sort reads the key alone; the derived order (key, then unit)
// agrees with it, and `sort_keyed` orders ties by unit after.
impl Radixable<Print> for Keyed {
    type Key = Print;
    fn key(&self) -> Print {
        self.key
    }
}

/// Sorts `keyed` by key, then unit. Keys are fingerprints, uniform over
/// their bits, so a radix sort reads each one a few times where a
/// comparison sort reads it log n times: 2.4 million keys took 170–190 ms
/// where `sort_unstable` took 270–290 ms (a micro-benchmark on this VM;
/// both memory-bound).
fn sort_keyed(keyed: &mut [Keyed]) {
    keyed.voracious_sort();
    for same in keyed.chunk_by_mut(|a, b| a.key == b.key) {
        if same.len() > 1 {
            same.sort_unstable_by_key(|k| k.unit);
        }
    }
}

/// A partition of the URLs into classes (*units*: each URL alone, or a
/// step's classes), judged. A step that works on a level's units (giving
/// each unit a key) is judged from it by what it changes: the units whose
/// key is not their own, and the unit whose own key they take.
pub struct Level {
    /// The URLs of unit `u` are `members[starts[u]..starts[u + 1]]`.
    starts: Vec<u32>,
    members: Vec<UrlId>,
    /// Each unit's key and the unit, in key order: a step's changed keys
    /// come in key order too, so their units are found by a merge, not by
    /// random reads of a table larger than the caches.
    by_key: Vec<Keyed>,
    /// Whether each unit is a URL (the unit's number is the URL's).
    of_urls: bool,
    /// Each unit's content, or [`MIXED`] if it holds more than one, and its
    /// URLs: what a step's usual merge (of units of one content) needs,
    /// in one read rather than one a URL.
    sole: Vec<[u32; 2]>,
    /// The level's own judgement (no examples).
    counts: Judgement,
    /// Units per content.
    keys: Vec<u32>,
    /// The units holding more than one content, most lines first.
    false_units: Vec<(u64, u32)>,
    /// The contents under more than one unit, most first.
    missed: Vec<u32>,
}

impl Level {
    /// Each URL a unit of its own: what the RFC rungs work on.
    pub fn of_urls(contents: &Contents) -> Level {
        let n = contents.urls() as u32;
        Level::new(
            contents,
            (0..=n).collect(),
            (0..n).collect(),
            &contents.own,
            true,
        )
    }

    /// The level whose units have the keys `own`, URL `u` in unit
    /// `unit_of[u]` (every unit holds a URL).
    pub fn of_classes(contents: &Contents, own: &[Print], unit_of: &[u32]) -> Level {
        let mut starts = vec![0u32; own.len() + 1];
        for &unit in unit_of {
            starts[unit as usize + 1] += 1;
        }
        for unit in 0..own.len() {
            starts[unit + 1] += starts[unit];
        }
        let mut fill = starts.clone();
        let mut members = vec![0; unit_of.len()];
        for (u, &unit) in unit_of.iter().enumerate() {
            members[fill[unit as usize] as usize] = u as UrlId;
            fill[unit as usize] += 1;
        }
        Level::new(contents, starts, members, own, false)
    }

    fn new(
        contents: &Contents,
        starts: Vec<u32>,
        members: Vec<UrlId>,
        own: &[Print],
        of_urls: bool,
    ) -> Level {
        let mut by_key: Vec<Keyed> = (own.iter().enumerate())
            .map(|(unit, &key)| Keyed {
                key,
                unit: unit as u32,
            })
            .collect();
        sort_keyed(&mut by_key);
        let mut counts = Judgement {
            same_pairs: contents.same_pairs,
            ..Judgement::default()
        };
        let mut keys = vec![0u32; contents.len()];
        let mut false_units = Vec::new();
        let mut sole = Vec::with_capacity(own.len());
        let mut composition = Vec::new();
        for unit in 0..own.len() {
            let urls = &members[starts[unit] as usize..starts[unit + 1] as usize];
            counts.merged_pairs += pairs(urls.len() as u64);
            composition.clear();
            composition.extend(urls.iter().map(|&u| contents.content[u as usize]));
            composition.sort_unstable();
            let mut held = 0;
            for same in composition.chunk_by(|a, b| a == b) {
                counts.right_pairs += pairs(same.len() as u64);
                keys[same[0] as usize] += 1;
                held += 1;
            }
            sole.push([
                if held == 1 { composition[0] } else { MIXED },
                urls.len() as u32,
            ]);
            if held > 1 {
                let lines = urls.iter().map(|&u| contents.lines[u as usize]).sum();
                counts.false_merges += 1;
                counts.false_lines += lines;
                false_units.push((lines, unit as u32));
            }
        }
        let first = |unit: u32| members[starts[unit as usize] as usize];
        let mut false_order: Vec<_> = false_units
            .into_iter()
            .map(|(lines, unit)| (std::cmp::Reverse(lines), first(unit), unit))
            .collect();
        false_order.sort_unstable();
        let false_units = false_order
            .into_iter()
            .map(|(std::cmp::Reverse(lines), _, unit)| (lines, unit))
            .collect();
        let mut missed_order: Vec<_> = (0..keys.len() as u32)
            .filter(|&c| keys[c as usize] > 1)
            .map(|c| {
                (
                    std::cmp::Reverse(keys[c as usize]),
                    contents.members_of(c)[0],
                    c,
                )
            })
            .collect();
        missed_order.sort_unstable();
        let missed: Vec<u32> = missed_order.into_iter().map(|(_, _, c)| c).collect();
        counts.missed = missed.len() as u64;
        counts.missed_keys = missed
            .iter()
            .map(|&c| u64::from(keys[c as usize]) - 1)
            .sum();
        Level {
            starts,
            members,
            by_key,
            of_urls,
            sole,
            counts,
            keys,
            false_units,
            missed,
        }
    }

    fn urls_of(&self, unit: u32) -> &[UrlId] {
        &self.members[self.starts[unit as usize] as usize..self.starts[unit as usize + 1] as usize]
    }

    /// The content the URLs of `units` share, if they are all one content.
    fn sole_content(&self, units: &[u32]) -> Option<u32> {
        let first = self.sole[units[0] as usize][0];
        units
            .iter()
            .all(|&unit| self.sole[unit as usize][0] == first)
            .then_some(first)
            .filter(|&c| c != MIXED)
    }

    /// The unit whose key is `key`, looked for from `from` on, which it
    /// moves past the keys below `key`: keys asked in increasing order are
    /// found in one pass over the level's.
    fn unit_of(&self, key: Print, from: &mut usize) -> Option<u32> {
        let rest = &self.by_key[*from..];
        // Galloping: the next key is usually near the last.
        let (mut below, mut step) = (0, 1);
        while step < rest.len() && rest[step].key < key {
            below = step;
            step *= 2;
        }
        let end = (step + 1).min(rest.len());
        *from += below + rest[below..end].partition_point(|k| k.key < key);
        match self.by_key.get(*from) {
            Some(k) if k.key == key => Some(k.unit),
            _ => None,
        }
    }

    /// Judges the step that gives each unit of `changed` its key there (in
    /// any order; every other unit keeps its own); `key` gives any URL's
    /// key at the step (asked only for the examples).
    pub fn judge(
        &self,
        contents: &Contents,
        mut changed: Vec<Keyed>,
        key: impl Fn(UrlId) -> Print,
        examples: usize,
    ) -> Judgement {
        sort_keyed(&mut changed);
        let mut touched = vec![false; self.sole.len()];
        for &Keyed { unit, .. } in &changed {
            touched[unit as usize] = true;
        }
        let mut judgement = Judgement {
            false_examples: Vec::new(),
            missed_examples: Vec::new(),
            ..self.counts.clone()
        };
        // Keys each content loses (merges, rejections) or gains, and the
        // contents whose keys change.
        let mut keys_delta = vec![0i32; contents.len()];
        let mut changed_contents: Vec<u32> = Vec::new();
        let mut add_keys = |c: u32, delta: i32| {
            if keys_delta[c as usize] == 0 {
                changed_contents.push(c);
            }
            keys_delta[c as usize] += delta;
        };
        let mut new_false = Vec::new();
        // (content, unit, URL) of a class's URLs.
        let mut held: Vec<(u32, u32, UrlId)> = Vec::new();
        let mut units: Vec<u32> = Vec::new();
        let mut from = 0;
        for class in changed.chunk_by(|a, b| a.key == b.key) {
            let key = class[0].key;
            held.clear();
            units.clear();
            units.extend(class.iter().map(|k| k.unit));
            // The unit whose own key the class takes, if the step leaves it be.
            if key != REJECTED
                && let Some(unit) = self.unit_of(key, &mut from)
                && !touched[unit as usize]
            {
                touched[unit as usize] = true;
                units.push(unit);
            }
            if key != REJECTED && units.len() < 2 {
                // A unit that only changes its key: nothing else changes.
                continue;
            }
            if let Some(content) = self.sole_content(&units) {
                // Units of one content each: their pairs are all right, and
                // so are the class's when it is one content too.
                let mut urls = 0;
                for &unit in &units {
                    let [c, n] = self.sole[unit as usize];
                    judgement.merged_pairs -= pairs(u64::from(n));
                    judgement.right_pairs -= pairs(u64::from(n));
                    add_keys(c, -1);
                    urls += u64::from(n);
                }
                if key != REJECTED {
                    judgement.merged_pairs += pairs(urls);
                    judgement.right_pairs += pairs(urls);
                    add_keys(content, 1);
                }
                continue;
            }
            for &unit in &units {
                match self.of_urls {
                    // A unit of the level of URLs is its URL.
                    true => held.push((contents.content[unit as usize], unit, unit)),
                    false => {
                        let urls = self.urls_of(unit);
                        held.extend(
                            urls.iter()
                                .map(|&u| (contents.content[u as usize], unit, u)),
                        );
                    }
                }
            }
            // What the units were: their pairs and false merges go.
            held.sort_unstable_by_key(|&(c, unit, u)| (unit, c, u));
            for unit in held.chunk_by(|a, b| a.1 == b.1) {
                judgement.merged_pairs -= pairs(unit.len() as u64);
                let mut contents_held = 0;
                for same in unit.chunk_by(|a, b| a.0 == b.0) {
                    judgement.right_pairs -= pairs(same.len() as u64);
                    add_keys(same[0].0, -1);
                    contents_held += 1;
                }
                if contents_held > 1 {
                    judgement.false_merges -= 1;
                    judgement.false_lines -= unit
                        .iter()
                        .map(|&(_, _, u)| contents.lines[u as usize])
                        .sum::<u64>();
                }
            }
            if key == REJECTED {
                continue;
            }
            // What the class is.
            held.sort_unstable_by_key(|&(c, _, u)| (c, u));
            judgement.merged_pairs += pairs(held.len() as u64);
            let mut held_contents = 0;
            for same in held.chunk_by(|a, b| a.0 == b.0) {
                judgement.right_pairs += pairs(same.len() as u64);
                add_keys(same[0].0, 1);
                held_contents += 1;
            }
            if held_contents > 1 {
                let lines = held
                    .iter()
                    .map(|&(_, _, u)| contents.lines[u as usize])
                    .sum();
                judgement.false_merges += 1;
                judgement.false_lines += lines;
                let mut first_of_each: Vec<UrlId> = held
                    .chunk_by(|a, b| a.0 == b.0)
                    .map(|same| same[0].2)
                    .collect();
                first_of_each.sort_unstable();
                new_false.push(FalseMerge {
                    lines,
                    contents: first_of_each.len() as u64,
                    urls: first_of_each,
                });
            }
        }
        // A content is listed each time its delta leaves 0; one whose delta
        // came back to 0 is unchanged.
        changed_contents.sort_unstable();
        changed_contents.dedup();
        changed_contents.retain(|&c| keys_delta[c as usize] != 0);
        let mut keys_now: Vec<(u32, u64)> = Vec::with_capacity(changed_contents.len());
        for &c in &changed_contents {
            let delta = i64::from(keys_delta[c as usize]);
            let before = u64::from(self.keys[c as usize]);
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
        // The level's own false merges the step left alone compete with
        // the new ones for the examples.
        let kept = self
            .false_units
            .iter()
            .filter(|&&(_, unit)| !touched[unit as usize])
            .take(examples)
            .map(|&(lines, unit)| self.false_merge(contents, lines, unit));
        new_false.extend(kept);
        judgement.false_examples = largest_false(new_false, examples);
        judgement.missed_examples =
            self.largest_missed(contents, keys_now, &keys_delta, &key, examples);
        judgement
    }

    /// Unit `unit`, which holds more than one content, as an example.
    fn false_merge(&self, contents: &Contents, lines: u64, unit: u32) -> FalseMerge {
        let mut held: Vec<(u32, UrlId)> = self
            .urls_of(unit)
            .iter()
            .map(|&u| (contents.content[u as usize], u))
            .collect();
        held.sort_unstable();
        let mut urls: Vec<UrlId> = held
            .chunk_by(|a, b| a.0 == b.0)
            .map(|same| same[0].1)
            .collect();
        urls.sort_unstable();
        FalseMerge {
            lines,
            contents: urls.len() as u64,
            urls,
        }
    }

    /// The `n` contents under most keys, most first (earliest first on a
    /// tie), each with its earliest URL under each of its first keys.
    /// `touched` are the contents whose keys the step changed, with their
    /// keys now; every other content has as many as at this level.
    fn largest_missed(
        &self,
        contents: &Contents,
        mut touched: Vec<(u32, u64)>,
        keys_delta: &[i32],
        key: &impl Fn(UrlId) -> Print,
        n: usize,
    ) -> Vec<MissedMerge> {
        // Most keys first, then the earliest first URL (each looked up once).
        let order = |(c, keys): (u32, u64)| (std::cmp::Reverse(keys), contents.members_of(c)[0], c);
        touched.retain(|&(_, keys)| keys > 1);
        let untouched = self
            .missed
            .iter()
            .filter(|&&c| keys_delta[c as usize] == 0)
            .take(n)
            .map(|&c| (c, u64::from(self.keys[c as usize])));
        let largest = smallest(touched.into_iter().chain(untouched).map(order).collect(), n);
        largest
            .into_iter()
            .map(|(std::cmp::Reverse(keys), _, c)| {
                let mut seen: Vec<Print> = Vec::new();
                let mut urls = Vec::new();
                for &u in contents.members_of(c) {
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

/// The `n` smallest of `all`, in order.
fn smallest<T: Ord>(mut all: Vec<T>, n: usize) -> Vec<T> {
    if all.len() > n {
        all.select_nth_unstable(n);
        all.truncate(n);
    }
    all.sort_unstable();
    all
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
    use super::super::contents::of_captures as contents;
    use super::*;
    use std::collections::HashMap;

    /// The judgement, by brute force over every pair: the oracle.
    fn naive(contents: &Contents, key: &dyn Fn(UrlId) -> Print) -> (u64, u64, u64, u64, u64) {
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
        let mut classes: HashMap<Print, Vec<u32>> = HashMap::new();
        let mut keys: HashMap<u32, Vec<Print>> = HashMap::new();
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
        let steps: Vec<Vec<(Print, Print)>> = vec![
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

    proptest::proptest! {
        #[test]
        fn a_step_over_classes_is_judged_as_the_oracle_judges(
            captures in proptest::collection::vec((1u128..24, 1u64..8), 1..40),
            class_of in proptest::collection::vec(0u32..6, 24),
            step in proptest::collection::vec(0u128..9, 6),
        ) {
            let c = contents(&captures);
            // URLs into classes (renumbered in order of first use), each
            // class keyed 1000 + its number.
            let mut numbers: Vec<u32> = Vec::new();
            let unit_of: Vec<u32> = (0..c.urls() as UrlId)
                .map(|u| {
                    let class = class_of[c.own(u) as usize];
                    match numbers.iter().position(|&n| n == class) {
                        Some(i) => i as u32,
                        None => {
                            numbers.push(class);
                            numbers.len() as u32 - 1
                        }
                    }
                })
                .collect();
            let own: Vec<Print> = (0..numbers.len() as u128).map(|i| 1000 + i).collect();
            let level = Level::of_classes(&c, &own, &unit_of);
            // The step: a class keeps its key, takes another's, a shared
            // new one, or is rejected.
            let image = |unit: u32| match step[numbers[unit as usize] as usize] {
                0 => REJECTED,
                k if k < 4 => own[unit as usize],
                k if k < 7 => 1000 + u128::from((unit + 1) % numbers.len() as u32),
                k => 500 + k % 2,
            };
            let changed = (0..numbers.len() as u32)
                .filter(|&unit| image(unit) != own[unit as usize])
                .map(|unit| Keyed { key: image(unit), unit })
                .collect();
            let key = |u: UrlId| image(unit_of[u as usize]);
            let j = level.judge(&c, changed, key, 3);
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

    #[test]
    fn the_largest_false_merges_come_first_naming_a_few_urls() {
        let merge = |lines, urls: &[UrlId]| FalseMerge {
            lines,
            contents: urls.len() as u64,
            urls: urls.to_vec(),
        };
        let all = vec![
            merge(2, &[5, 6]),
            merge(9, &[3, 4, 7, 8]),
            merge(2, &[1, 2]),
        ];
        let largest = largest_false(all, 2);
        let shown: Vec<(u64, u64, &[UrlId])> = (largest.iter())
            .map(|m| (m.lines, m.contents, &m.urls[..]))
            .collect();
        // Most lines first, then the earliest; still 4 contents, 3 named.
        assert_eq!(shown, [(9, 4, &[3, 4, 7][..]), (2, 2, &[1, 2][..])]);
        assert_eq!(smallest(vec![5, 1, 4, 2], 3), [1, 2, 4]);
    }
}
