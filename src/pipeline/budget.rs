//! Per-site budgets that persist: at most so many keys of each site in
//! the seen store, across runs and clients ([`Budget`]), where a cap
//! ([`caps`](super::caps)) counts one run. The store counts the keys it
//! holds of each site (expired and forgotten ones give their slots back);
//! a run starts from those counts and spends them in input order, each
//! class of a site met for the first time named for the store.
//!
//! It knows site numbers, site prints and counts; not lines or what a
//! site is.

use super::caps::{NO_SITE, SiteNumbers};
use crate::line::key::Site;
use crate::store::{SiteCounts, Store, StoreError, site_print};

/// What a budget allows: at most `limit` keys of each site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// What a site is (the mapper's site must be it); the store records
    /// its name.
    pub site: Site,
    pub limit: u64,
}

/// A run's budget, spent: the keys held of each site, and the sites met.
pub(crate) struct Spending {
    limit: u64,
    /// The keys held of each site: the store's when the run began, and
    /// the classes this run admitted since.
    held: SiteCounts,
    /// Each site number's print, once met.
    prints: Vec<u64>,
    /// Sites the store has no name for, named at the next commit.
    unnamed: Vec<(u64, Vec<u8>)>,
    /// The prints the store (or this run) has named.
    named: ahash::HashSet<u64>,
}

impl Spending {
    /// Starts from what `store` holds of each site, keeping its sites (a
    /// store that keeps sites of another kind is refused).
    pub(crate) fn start(budget: Budget, store: &mut Store) -> Result<Spending, StoreError> {
        if store.is_writable() {
            store.keep_sites(budget.site.name())?;
        }
        let named = store.site_names()?.into_keys().collect();
        Ok(Spending {
            limit: budget.limit,
            held: store.site_counts()?,
            prints: Vec::new(),
            unnamed: Vec::new(),
            named,
        })
    }

    /// Whether the next class of site `number` is within the budget (and
    /// if so it counts). Called in input order.
    pub(crate) fn spend(&mut self, number: u32, numbers: &SiteNumbers) -> bool {
        if number == NO_SITE {
            return true;
        }
        let print = self.print_of(number, numbers);
        let held = self.held.entry(print).or_default();
        let within = *held < self.limit;
        *held += u64::from(within);
        within
    }

    /// Site `number`'s print (the store's), noting its name if the store
    /// has none.
    fn print_of(&mut self, number: u32, numbers: &SiteNumbers) -> u64 {
        let n = number as usize;
        if self.prints.len() <= n {
            self.prints.resize(n + 1, crate::store::NO_SITE);
        }
        if self.prints[n] == crate::store::NO_SITE {
            let name = numbers.name(number);
            let print = site_print(&name);
            if self.named.insert(print) {
                self.unnamed.push((print, name));
            }
            self.prints[n] = print;
        }
        self.prints[n]
    }

    /// The print of a site number met (via [`Spending::spend`]), or the
    /// store's none.
    pub(crate) fn print(&self, number: u32) -> u64 {
        self.prints
            .get(number as usize)
            .copied()
            .unwrap_or(crate::store::NO_SITE)
    }

    /// The names of the sites met since the last call, for a commit.
    pub(crate) fn take_names(&mut self) -> Vec<(u64, Vec<u8>)> {
        std::mem::take(&mut self.unnamed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::caps::ChunkSites;
    use crate::store::{Access, Config, Staging};

    #[test]
    fn a_budget_starts_from_the_stores_counts_and_names_new_sites_once() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::new([("rung", "scheme")]);
        let mut store = Store::open(dir.path(), &config, Access::Write { wait: false }).unwrap();
        store.keep_sites("host").unwrap();
        let a = site_print(b"a.example");
        let names = vec![(a, b"a.example".to_vec())];
        let held = [(1u128, a), (2, a)];
        store
            .stage_sited(held.into_iter(), Staging::Admit { renewed: 0 }, names)
            .unwrap();
        store.publish().unwrap();
        let budget = Budget {
            site: Site::Host,
            limit: 3,
        };
        let mut spending = Spending::start(budget, &mut store).unwrap();
        let numbers = SiteNumbers::named();
        let mut chunk = ChunkSites::default();
        for (at, name) in [b"a.example", b"b.example", b"a.example", b"b.example"]
            .iter()
            .enumerate()
        {
            chunk.push(&numbers, at as u32, &name[..]);
        }
        let mut sites = [NO_SITE; 4];
        numbers.number(&mut chunk, |at, n| sites[at as usize] = n);
        let spent: Vec<bool> = sites.iter().map(|&n| spending.spend(n, &numbers)).collect();
        assert_eq!(spent, [true, true, false, true], "a.example had 2 of 3");
        assert_eq!(spending.print(sites[1]), site_print(b"b.example"));
        let named = spending.take_names();
        assert_eq!(named, [(site_print(b"b.example"), b"b.example".to_vec())]);
        assert!(spending.spend(NO_SITE, &numbers));
        let e = Spending::start(
            Budget {
                site: Site::Domain,
                limit: 3,
            },
            &mut store,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("by host"), "{e}");
    }
}
