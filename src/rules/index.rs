//! The rules of a host found through one index, not a scan of every rule:
//! a table of exact hosts, a table of domains looked up once for each
//! label-boundary suffix of the host, and the rules for every host.

use std::collections::HashMap;

use super::lines::HostPattern;

/// Rules (by their number) keyed by the hosts their patterns name.
#[derive(Debug, Default)]
pub(super) struct HostIndex {
    exact: HashMap<Box<[u8]>, Vec<u32>, ahash::RandomState>,
    domains: HashMap<Box<[u8]>, Vec<u32>, ahash::RandomState>,
    every: Vec<u32>,
}

impl HostIndex {
    /// The index of `patterns`, the rules' in order.
    pub(super) fn new<'p>(patterns: impl Iterator<Item = &'p HostPattern>) -> HostIndex {
        let mut index = HostIndex::default();
        for (number, pattern) in patterns.enumerate() {
            let number = number as u32;
            match pattern {
                HostPattern::Every => index.every.push(number),
                HostPattern::Exact(host) => {
                    index.exact.entry(host.clone()).or_default().push(number)
                }
                HostPattern::Domain(domain) => index
                    .domains
                    .entry(domain.clone())
                    .or_default()
                    .push(number),
            }
        }
        index
    }

    /// The rules whose patterns match `host` (a canonical host: lower case,
    /// ASCII), in their order, into `matched`.
    pub(super) fn matching(&self, host: &[u8], matched: &mut Vec<u32>) {
        matched.clear();
        matched.extend_from_slice(&self.every);
        // `example.com.` is `example.com` (its root dot is no label).
        let host = host.strip_suffix(b".").unwrap_or(host);
        if let Some(rules) = self.exact.get(host) {
            matched.extend_from_slice(rules);
        }
        if !self.domains.is_empty() {
            let mut suffix = host;
            loop {
                if let Some(rules) = self.domains.get(suffix) {
                    matched.extend_from_slice(rules);
                }
                match memchr::memchr(b'.', suffix) {
                    Some(dot) => suffix = &suffix[dot + 1..],
                    None => break,
                }
            }
        }
        // Rules apply in the order they were written, whatever matched them.
        matched.sort_unstable();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(patterns: &[HostPattern]) -> HostIndex {
        HostIndex::new(patterns.iter())
    }

    #[test]
    fn patterns_match_on_label_boundaries() {
        let domain = |d: &str| HostPattern::Domain(d.as_bytes().into());
        let exact = |d: &str| HostPattern::Exact(d.as_bytes().into());
        let index = index(&[
            domain("example.com"),
            exact("shop.example.com"),
            HostPattern::Every,
            domain("com"),
        ]);
        let matched = |host: &str| {
            let mut m = Vec::new();
            index.matching(host.as_bytes(), &mut m);
            m
        };
        assert_eq!(matched("example.com"), [0, 2, 3]);
        assert_eq!(matched("a.b.example.com"), [0, 2, 3]);
        assert_eq!(matched("shop.example.com"), [0, 1, 2, 3]);
        assert_eq!(matched("shop.example.com."), [0, 1, 2, 3]);
        assert_eq!(matched("badexample.com"), [2, 3]);
        assert_eq!(matched("example.org"), [2]);
        assert_eq!(matched("127.0.0.1"), [2]);
    }
}
