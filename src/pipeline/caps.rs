//! Per-site caps: at most so many classes of each site (a host, a domain:
//! whatever the mapper says a line's site is), in input order, the budget
//! of a crawler frontier. The workers number the sites as they meet them
//! ([`SiteNumbers`], in parallel: a number only has to be the same for the
//! same site), a chunk's sites together, so that a worker takes each lock
//! of the shared table once a chunk, not once a line; the serial decision
//! in input order is then an array lookup, and a class sent to the spill
//! carries its site's number back. A site is known by its 128-bit
//! in-memory fingerprint (as the ladder counts classes): a collision among
//! 10^6 sites has a probability near 10^-27, and a lookup reads one table
//! slot, not the site's bytes.
//!
//! It knows sites as bytes and counts; not what a site is.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use super::hash::{InMemoryPrints, PrintHasher};

/// The number of "no site": a class without one is never capped.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// How many locks the site table is split under, so that workers rarely
/// wait for each other.
const SHARDS: usize = 64;

type Numbers = HashMap<u128, u32, PrintHasher>;

/// A number for each site, given on first sight by any worker; for a
/// budget ([`SiteNumbers::named`]), each number's name too.
pub(crate) struct SiteNumbers {
    prints: InMemoryPrints,
    shards: [Mutex<Numbers>; SHARDS],
    next: AtomicU32,
    /// Each number's name, when kept: written on first sight only.
    names: Option<Mutex<Vec<Vec<u8>>>>,
}

/// A site waiting for its number: the line's place (the caller's index),
/// the site's fingerprint, and where its name is in [`ChunkSites`]'s
/// bytes (kept only for named numbers).
struct Waiting {
    at: u32,
    name: (u32, u32),
    print: u128,
}

/// The sites of a chunk's lines waiting for their numbers. Reused from
/// chunk to chunk.
#[derive(Default)]
pub(crate) struct ChunkSites {
    waiting: Vec<Waiting>,
    names: Vec<u8>,
}

impl ChunkSites {
    /// Notes that the line at `at` has `site`.
    pub(crate) fn push(&mut self, numbers: &SiteNumbers, at: u32, site: &[u8]) {
        let start = self.names.len() as u32;
        if numbers.names.is_some() {
            self.names.extend_from_slice(site);
        }
        self.waiting.push(Waiting {
            at,
            name: (start, self.names.len() as u32),
            print: numbers.prints.of(site),
        });
    }
}

fn shard(print: u128) -> usize {
    (print >> 64) as usize % SHARDS
}

impl SiteNumbers {
    pub(crate) fn new() -> SiteNumbers {
        SiteNumbers {
            prints: InMemoryPrints::new(),
            shards: std::array::from_fn(|_| Mutex::default()),
            next: AtomicU32::new(0),
            names: None,
        }
    }

    /// Numbers that keep each site's name ([`SiteNumbers::name`]).
    pub(crate) fn named() -> SiteNumbers {
        SiteNumbers {
            names: Some(Mutex::default()),
            ..SiteNumbers::new()
        }
    }

    /// The name of site `number` (empty unless [`SiteNumbers::named`]).
    pub(crate) fn name(&self, number: u32) -> Vec<u8> {
        let Some(names) = &self.names else {
            return Vec::new();
        };
        let names = names.lock().unwrap_or_else(|p| p.into_inner());
        names.get(number as usize).cloned().unwrap_or_default()
    }

    /// Notes the name of `number`, met for the first time.
    fn note_name(&self, number: u32, name: &[u8]) {
        if let Some(names) = &self.names {
            let mut names = names.lock().unwrap_or_else(|p| p.into_inner());
            let n = number as usize;
            if names.len() <= n {
                names.resize(n + 1, Vec::new());
            }
            names[n] = name.to_vec();
        }
    }

    /// Gives each site of `sites` its number (`number(at, n)`), numbering
    /// those met for the first time, and empties `sites`. Sites are taken
    /// shard by shard, each shard's lock once.
    pub(crate) fn number(&self, sites: &mut ChunkSites, mut number: impl FnMut(u32, u32)) {
        sites.waiting.sort_unstable_by_key(|w| shard(w.print));
        for group in sites
            .waiting
            .chunk_by(|a, b| shard(a.print) == shard(b.print))
        {
            let mut numbers = self.shards[shard(group[0].print)]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            for w in group {
                let n = *numbers.entry(w.print).or_insert_with(|| {
                    let n = self.next.fetch_add(1, Ordering::Relaxed);
                    // A site has a line: fewer than 2^32 - 1 of them in
                    // any input a chunk offset can address.
                    assert!(n != NO_SITE, "fewer than 2^32 - 1 sites");
                    self.note_name(n, &sites.names[w.name.0 as usize..w.name.1 as usize]);
                    n
                });
                number(w.at, n);
            }
        }
        sites.waiting.clear();
        sites.names.clear();
    }
}

/// The classes admitted so far of each site, under one limit.
pub(crate) struct Caps {
    limit: u64,
    /// Classes admitted, by site number.
    admitted: Vec<u64>,
}

impl Caps {
    pub(crate) fn new(limit: u64) -> Caps {
        Caps {
            limit,
            admitted: Vec::new(),
        }
    }

    /// Whether the next class of site `number` is within the cap (and if so
    /// it counts). Called in input order.
    pub(crate) fn admit(&mut self, number: u32) -> bool {
        if number == NO_SITE {
            return true;
        }
        let n = number as usize;
        if n >= self.admitted.len() {
            self.admitted.resize(n + 1, 0);
        }
        let within = self.admitted[n] < self.limit;
        self.admitted[n] += u64::from(within);
        within
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of `names` (`None`: no site), taken as one chunk.
    fn numbers_of(sites: &SiteNumbers, names: &[Option<&[u8]>]) -> Vec<u32> {
        let mut numbers = vec![NO_SITE; names.len()];
        let mut chunk = ChunkSites::default();
        for (at, name) in names.iter().enumerate() {
            if let Some(name) = name {
                chunk.push(sites, at as u32, name);
            }
        }
        sites.number(&mut chunk, |at, n| numbers[at as usize] = n);
        assert!(chunk.waiting.is_empty(), "emptied for the next chunk");
        numbers
    }

    #[test]
    fn admits_the_first_classes_of_each_site() {
        let (sites, mut caps) = (SiteNumbers::new(), Caps::new(2));
        let lines = [
            Some(&b"a"[..]),
            Some(b"b"),
            Some(b"a"),
            None,
            Some(b"a"),
            None,
            Some(b"b"),
        ];
        let admitted: Vec<bool> = numbers_of(&sites, &lines)
            .into_iter()
            .map(|n| caps.admit(n))
            .collect();
        assert_eq!(admitted, [true, true, true, true, false, true, true]);
        assert_eq!(numbers_of(&sites, &[Some(b"b")]), [1], "numbers are kept");
    }

    #[test]
    fn a_zero_cap_admits_only_classes_without_a_site() {
        let (sites, mut caps) = (SiteNumbers::new(), Caps::new(0));
        assert!(!caps.admit(numbers_of(&sites, &[Some(b"a")])[0]));
        assert!(caps.admit(NO_SITE));
    }

    #[test]
    fn workers_get_one_number_per_site() {
        let sites = SiteNumbers::new();
        let names: Vec<Vec<u8>> = (0..1000)
            .map(|i| format!("h{}", i % 100).into_bytes())
            .collect();
        let numbers: Vec<u32> = std::thread::scope(|s| {
            let chunks: Vec<_> = names
                .chunks(50)
                .map(|chunk| {
                    s.spawn(|| {
                        let chunk: Vec<Option<&[u8]>> =
                            chunk.iter().map(|n| Some(&n[..])).collect();
                        numbers_of(&sites, &chunk)
                    })
                })
                .collect();
            chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        for (name, n) in names.iter().zip(&numbers) {
            assert_eq!(numbers_of(&sites, &[Some(name)]), [*n]);
        }
        let distinct: std::collections::HashSet<_> = numbers.iter().collect();
        assert_eq!(distinct.len(), 100);
        assert!(numbers.iter().all(|&n| n < 100));
    }
}
