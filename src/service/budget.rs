//! A per-site budget served: the keys of each site the store holds and
//! the clients have had admitted since, spent under the pending lock, so
//! that across racing clients a site gets no more than its budget. Read
//! again from the store after every forget, expiry and compaction, and
//! hourly under a maximum age (a key's slot comes back within the hour
//! after it expires).
//!
//! It knows site prints, pending keys and counts; not lines or the
//! committer's work.

use std::time::{Duration, Instant};

use crate::pipeline::Budget;
use crate::store::{NO_SITE, SiteCounts, Store, StoreError};

/// How often the counts are read again from the store under a maximum
/// age, for the keys that expire meanwhile.
pub const RECOUNT_EVERY: Duration = Duration::from_secs(3600);

/// What a budget has spent over keys pending (admitted, not committed):
/// the service's, and a `SeenSet`'s in Python.
pub struct SiteBudget {
    limit: u64,
    /// The keys of each site the store holds or has pending.
    held: SiteCounts,
    /// Each pending key's site.
    sites: ahash::HashMap<u128, u64>,
    /// Sites named in the store or pending, and those not yet committed.
    named: ahash::HashSet<u64>,
    unnamed: Vec<(u64, Vec<u8>)>,
    counted_at: Instant,
}

impl SiteBudget {
    /// Starts from `store`'s counts (it keeps sites from now on).
    pub fn start(budget: Budget, store: &mut Store) -> Result<SiteBudget, StoreError> {
        store.keep_sites(budget.site.name())?;
        Ok(SiteBudget {
            limit: budget.limit,
            held: store.site_counts()?,
            sites: ahash::HashMap::default(),
            named: store.site_names()?.into_keys().collect(),
            unnamed: Vec::new(),
            counted_at: Instant::now(),
        })
    }

    /// Whether key `print` of `site` (named `name`) is within the budget;
    /// if so it is counted as pending.
    pub fn spend(&mut self, print: u128, site: u64, name: &[u8]) -> bool {
        if site == NO_SITE {
            return true;
        }
        let held = self.held.entry(site).or_default();
        if *held >= self.limit {
            return false;
        }
        *held += 1;
        self.sites.insert(print, site);
        if self.named.insert(site) {
            self.unnamed.push((site, name.to_vec()));
        }
        true
    }

    /// The keys `prints` (pending) with their sites, ascending by print.
    pub fn sited(&self, prints: impl Iterator<Item = u128>) -> Vec<(u128, u64)> {
        let mut sited: Vec<(u128, u64)> = prints
            .map(|p| (p, self.sites.get(&p).copied().unwrap_or(NO_SITE)))
            .collect();
        sited.sort_unstable_by_key(|&(print, _)| print);
        sited
    }

    /// The sites met since the last commit, for it to name.
    pub fn take_names(&mut self) -> Vec<(u64, Vec<u8>)> {
        std::mem::take(&mut self.unnamed)
    }

    /// Names that a failed commit did not write, for the next.
    pub fn keep_names(&mut self, names: Vec<(u64, Vec<u8>)>) {
        self.unnamed.extend(names);
    }

    /// Keys `prints` are in the store now, no longer pending.
    pub fn committed<'p>(&mut self, prints: impl Iterator<Item = &'p u128>) {
        for print in prints {
            self.sites.remove(print);
        }
    }

    /// Pending key `print` was forgotten: its slot is free.
    pub fn forgot(&mut self, print: u128) {
        if let Some(site) = self.sites.remove(&print)
            && let Some(held) = self.held.get_mut(&site)
        {
            *held = held.saturating_sub(1);
        }
    }

    /// Whether the counts are due to be read again for keys expired.
    pub fn recount_due(&self, store: &Store) -> bool {
        store.clock().max_age().is_some() && self.counted_at.elapsed() >= RECOUNT_EVERY
    }

    /// Reads the counts again: the store's, and the keys pending.
    pub fn recount(&mut self, store: &Store) -> Result<(), StoreError> {
        let mut held = store.site_counts()?;
        for site in self.sites.values() {
            *held.entry(*site).or_default() += 1;
        }
        self.held = held;
        self.counted_at = Instant::now();
        Ok(())
    }
}
