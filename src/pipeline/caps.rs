//! Per-site caps: at most so many classes of each site (a host, a domain:
//! whatever the mapper says a line's site is), in input order, the budget
//! of a crawler frontier. Sites are numbered as they come, so that a class
//! sent to the spill carries its site's number and is capped in turn when
//! the spill hands it back.
//!
//! It knows sites as bytes and counts; not what a site is.

use std::collections::HashMap;

/// The number of "no site": a class without one is never capped.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// The classes admitted so far of each site, under one limit.
pub(crate) struct Caps {
    limit: u64,
    numbers: HashMap<Box<[u8]>, u32, ahash::RandomState>,
    /// Classes admitted, by site number.
    admitted: Vec<u64>,
}

impl Caps {
    pub(crate) fn new(limit: u64) -> Caps {
        Caps {
            limit,
            numbers: HashMap::with_hasher(super::hash::key_hasher()),
            admitted: Vec::new(),
        }
    }

    /// The number of `site` (`None`: [`NO_SITE`]), given on first sight.
    pub(crate) fn number(&mut self, site: Option<&[u8]>) -> u32 {
        let Some(site) = site else {
            return NO_SITE;
        };
        if let Some(&n) = self.numbers.get(site) {
            return n;
        }
        // Fewer sites than u32::MAX: each has a class, and a class a line.
        let n = u32::try_from(self.admitted.len())
            .ok()
            .filter(|&n| n != NO_SITE)
            .expect("fewer than 2^32 - 1 sites");
        self.numbers.insert(site.into(), n);
        self.admitted.push(0);
        n
    }

    /// Whether the next class of site `number` is within the cap (and if so
    /// it counts).
    pub(crate) fn admit(&mut self, number: u32) -> bool {
        let Some(admitted) = self.admitted.get_mut(number as usize) else {
            return true; // no site
        };
        let within = *admitted < self.limit;
        *admitted += u64::from(within);
        within
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_the_first_classes_of_each_site() {
        let mut caps = Caps::new(2);
        let sites = [
            Some(&b"a"[..]),
            Some(b"b"),
            Some(b"a"),
            None,
            Some(b"a"),
            None,
            Some(b"b"),
        ];
        let admitted: Vec<bool> = sites
            .iter()
            .map(|&site| {
                let n = caps.number(site);
                caps.admit(n)
            })
            .collect();
        assert_eq!(admitted, [true, true, true, true, false, true, true]);
        assert_eq!(caps.number(Some(b"b")), 1, "numbers are kept");
    }

    #[test]
    fn a_zero_cap_admits_only_classes_without_a_site() {
        let mut caps = Caps::new(0);
        let a = caps.number(Some(b"a"));
        assert!(!caps.admit(a));
        assert!(caps.admit(NO_SITE));
    }
}
