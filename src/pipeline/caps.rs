//! Per-site caps: at most so many classes of each site (a host, a domain:
//! whatever the mapper says a line's site is), in input order, the budget
//! of a crawler frontier. The workers number the sites as they meet them
//! ([`SiteNumbers`], in parallel: a number only has to be the same for the
//! same site; each worker's scratch remembers the numbers it has seen, so
//! it locks the shared table once a site), so the serial decision in input order is an
//! array lookup, and a class sent to the spill carries its site's number
//! back. A site is known by its 128-bit in-memory fingerprint (as the
//! ladder counts classes): a collision among 10^6 sites has a probability
//! near 10^-27, and a lookup reads one table slot, not the site's bytes.
//!
//! It knows sites as bytes and counts; not what a site is.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::hash::{InMemoryPrints, PrintHasher};

/// The number of "no site": a class without one is never capped.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// How many locks the site table is split under, so that workers rarely
/// wait for each other.
const SHARDS: usize = 64;

type Numbers = HashMap<u128, u32, PrintHasher>;

/// A number for each site, given on first sight by any worker.
pub(crate) struct SiteNumbers {
    /// Which table this is, for the threads' own copies.
    id: u64,
    prints: InMemoryPrints,
    shards: [Mutex<Numbers>; SHARDS],
    next: AtomicU32,
}

/// The numbers a worker has met, and of which table: its own copy, so
/// that it locks the shared table once a site while it is in the copy. A
/// copy travels with each set of a chunk's buffers (several per thread),
/// so it is bounded: past [`KNOWN_SITES`] it starts again.
#[derive(Default)]
pub(crate) struct KnownSites {
    table: u64,
    numbers: Numbers,
}

/// How many sites a worker's copy holds at most: under a MiB each.
const KNOWN_SITES: usize = 1 << 14;

/// The ids of tables made so far (0 is none).
static TABLES: AtomicU64 = AtomicU64::new(1);

impl SiteNumbers {
    pub(crate) fn new() -> SiteNumbers {
        SiteNumbers {
            id: TABLES.fetch_add(1, Ordering::Relaxed),
            prints: InMemoryPrints::new(),
            shards: std::array::from_fn(|_| Mutex::default()),
            next: AtomicU32::new(0),
        }
    }

    /// The number of `site` (`None`: [`NO_SITE`]), looked up first in
    /// what the worker already knows.
    pub(crate) fn number(&self, site: Option<&[u8]>, known: &mut KnownSites) -> u32 {
        let Some(site) = site else {
            return NO_SITE;
        };
        let print = self.prints.of(site);
        if known.table != self.id || known.numbers.len() >= KNOWN_SITES {
            known.numbers.clear();
            known.table = self.id;
        }
        *known
            .numbers
            .entry(print)
            .or_insert_with(|| self.shared_number(print))
    }

    /// The number of the site of fingerprint `print` in the shared table,
    /// given if it has none.
    fn shared_number(&self, print: u128) -> u32 {
        let shard = (print >> 64) as usize % SHARDS;
        let mut numbers = self.shards[shard].lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&n) = numbers.get(&print) {
            return n;
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // A site has a line: fewer than 2^32 - 1 of them in any input a
        // chunk offset can address.
        assert!(n != NO_SITE, "fewer than 2^32 - 1 sites");
        numbers.insert(print, n);
        n
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

    #[test]
    fn admits_the_first_classes_of_each_site() {
        let (sites, mut caps) = (SiteNumbers::new(), Caps::new(2));
        let mut known = KnownSites::default();
        let lines = [
            Some(&b"a"[..]),
            Some(b"b"),
            Some(b"a"),
            None,
            Some(b"a"),
            None,
            Some(b"b"),
        ];
        let admitted: Vec<bool> = lines
            .iter()
            .map(|&site| caps.admit(sites.number(site, &mut known)))
            .collect();
        assert_eq!(admitted, [true, true, true, true, false, true, true]);
        let fresh = &mut KnownSites::default();
        assert_eq!(sites.number(Some(b"b"), fresh), 1, "numbers are kept");
    }

    #[test]
    fn a_zero_cap_admits_only_classes_without_a_site() {
        let (sites, mut caps) = (SiteNumbers::new(), Caps::new(0));
        assert!(!caps.admit(sites.number(Some(b"a"), &mut KnownSites::default())));
        assert!(caps.admit(NO_SITE));
    }

    #[test]
    fn a_workers_copy_stays_bounded_and_numbers_stay_the_same() {
        let sites = SiteNumbers::new();
        let mut known = KnownSites::default();
        let names: Vec<Vec<u8>> = (0..KNOWN_SITES + 10)
            .map(|i| format!("h{i}").into_bytes())
            .collect();
        let first: Vec<u32> = names
            .iter()
            .map(|n| sites.number(Some(n), &mut known))
            .collect();
        assert!(known.numbers.len() <= KNOWN_SITES);
        for (name, n) in names.iter().zip(&first) {
            assert_eq!(sites.number(Some(name), &mut known), *n);
        }
    }

    #[test]
    fn workers_get_one_number_per_site() {
        let sites = SiteNumbers::new();
        let names: Vec<Vec<u8>> = (0..1000)
            .map(|i| format!("h{}", i % 100).into_bytes())
            .collect();
        let numbers: Vec<u32> = std::thread::scope(|s| {
            let halves: Vec<_> = names
                .chunks(500)
                .map(|half| {
                    s.spawn(|| {
                        let mut known = KnownSites::default();
                        half.iter()
                            .map(|n| sites.number(Some(n), &mut known))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        for (name, n) in names.iter().zip(&numbers) {
            assert_eq!(sites.number(Some(name), &mut KnownSites::default()), *n);
        }
        let distinct: std::collections::HashSet<_> = numbers.iter().collect();
        assert_eq!(distinct.len(), 100);
        assert!(numbers.iter().all(|&n| n < 100));
    }
}
