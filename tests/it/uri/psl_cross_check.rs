//! The registrable domains of real hosts, from the URL lists in
//! `../shared/corpora/urls/`, by the list built in (the `psl` crate, what
//! `strip-www` and `--key domain` use) against a second implementation of
//! the Public Suffix List algorithm (the `publicsuffix` crate, what `--psl
//! FILE` uses) reading the list as published (`testdata/psl/`, Debian's
//! copy of 2023-01-30).
//!
//! The two lists are not of the same day, so a host may differ where a
//! suffix was added or removed in between. Every difference must be one:
//! the built-in list's suffix for the host is no rule of the published
//! copy (added since), or the copy's suffix is no suffix to the built-in
//! list (removed since). Any other difference is a bug in one of them.

use std::collections::HashSet;

use urinorm::domain::SuffixList;
use urinorm::normalize::{Normalizer, Rung};
use urinorm::{HostKind, UriRef};

/// The distinct registered names of the URL lists, as the scheme rung
/// writes them (lowercase, punycode).
fn real_hosts() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpora/urls");
    let normalizer = Normalizer::new(Rung::Scheme);
    let mut hosts = HashSet::new();
    let mut files = vec![std::path::PathBuf::from(dir)];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(canonical) = normalizer.normalize(&String::from_utf8_lossy(line)) else {
                continue;
            };
            let uri = UriRef::parse(&canonical).unwrap();
            if let (Some(host), Some(HostKind::RegName)) = (uri.host(), uri.host_kind())
                && !host.is_empty()
                && !host.contains('%')
            {
                hosts.insert(host.trim_end_matches('.').to_string());
            }
        }
    }
    let mut hosts: Vec<String> = hosts.into_iter().collect();
    hosts.sort();
    hosts
}

/// The rules of a published list, in punycode: `example.com`, `*.ck`, `!www.ck`.
fn rules(text: &str) -> HashSet<String> {
    text.lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|rule| !rule.starts_with("//"))
        .map(|rule| {
            let (mark, name) = match rule.strip_prefix('!') {
                Some(name) => ("!", name),
                None => ("", rule),
            };
            let (wild, name) = match name.strip_prefix("*.") {
                Some(name) => ("*.", name),
                None => ("", name),
            };
            format!("{mark}{wild}{}", idna::domain_to_ascii(name).unwrap())
        })
        .collect()
}

/// Whether the published rules make `name` a public suffix.
fn is_rule(rules: &HashSet<String>, name: &str) -> bool {
    let wildcard = name
        .split_once('.')
        .is_some_and(|(_, parent)| rules.contains(&format!("*.{parent}")));
    rules.contains(name) || (wildcard && !rules.contains(&format!("!{name}")))
}

/// The public suffix under a registrable domain: all but its first label.
fn suffix_of(domain: &str) -> &str {
    domain.split_once('.').map_or("", |(_, rest)| rest)
}

#[test]
fn registrable_domains_agree_with_a_second_implementation() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/psl/public_suffix_list.dat"
    ))
    .unwrap();
    let published = SuffixList::parse(&text).unwrap();
    let rules = rules(&text);
    let built_in = SuffixList::BuiltIn;
    let hosts = real_hosts();
    assert!(hosts.len() > 10_000, "only {} hosts", hosts.len());
    let (mut agreed, mut newer, mut unexplained) = (0, Vec::new(), Vec::new());
    for host in &hosts {
        let domain = |list: &SuffixList| {
            list.registrable_domain(host.as_bytes())
                .map(|d| String::from_utf8(d.to_vec()).unwrap())
        };
        let (ours, theirs) = (domain(&built_in), domain(&published));
        if ours == theirs {
            agreed += 1;
            continue;
        }
        // Each list's public suffix for the host.
        let our_suffix = psl::suffix_str(host).unwrap_or_default();
        let their_suffix = theirs.as_deref().map_or(host.as_str(), suffix_of);
        let added_since = our_suffix.len() > their_suffix.len() && !is_rule(&rules, our_suffix);
        let removed_since = their_suffix.len() > our_suffix.len()
            && is_rule(&rules, their_suffix)
            && psl::suffix_str(their_suffix) != Some(their_suffix);
        match added_since || removed_since {
            true => newer.push(format!("{host}: {ours:?} / {theirs:?}")),
            false => unexplained.push(format!("{host}: built in {ours:?}, published {theirs:?}")),
        }
    }
    assert!(unexplained.is_empty(), "{unexplained:#?}");
    for line in newer.iter().take(8) {
        eprintln!("  {line}");
    }
    // The lists are years apart on a few suffixes, not on most hosts.
    assert!(newer.len() * 100 < hosts.len(), "{newer:#?}");
    eprintln!(
        "{} hosts: {agreed} agree, {} differ by the lists' dates",
        hosts.len(),
        newer.len()
    );
}
