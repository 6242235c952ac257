//! A store's sites, for per-site budgets that persist across runs: each
//! key's site (a fingerprint of its host or domain, [`site_print`]) is
//! kept beside the key in its run, so that the keys held of each site are
//! counted from the runs themselves ([`Store::site_counts`]): a commit, a
//! forget, an expiry or a maximum age changes the counts exactly as it
//! changes the keys, and a kill leaves both at the same commit. The
//! store records counts, never a limit: the budget is the run's to give.
//!
//! Sites are named in a file of their own (`SITES`), appended at each
//! commit that meets a new site, synced before the manifest that records
//! its committed length: a kill leaves a tail the manifest does not
//! count, which the next writer cuts off.
//!
//! ```text
//! record   site print (8, little-endian), name length (2), name, CRC-32
//!          of the three (4)
//! ```
//!
//! It knows site prints, names and bytes on disk; not URIs or budgets.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;

use super::run::NO_SITE;
use super::{Holding, Store, StoreError, manifest, merge::merge_runs};
use crate::fingerprint::fingerprint;

/// The file of site names in a store's directory.
pub(crate) const NAMES_FILE: &str = "SITES";

/// Longer names are kept cut to this many bytes (a host has at most 253).
const MAX_NAME_BYTES: usize = 1024;

/// The keys held of each site, by site print.
pub type SiteCounts = HashMap<u64, u64, ahash::RandomState>;

/// Site names, by site print.
pub type SiteNames = HashMap<u64, Vec<u8>, ahash::RandomState>;

/// The print a site (its host or domain, as bytes) is kept under: the
/// first 8 bytes of its [`fingerprint`], stable across versions and
/// machines. A collision of two sites among 10^6 has a probability near
/// 3·10^-8; 0 is [`NO_SITE`], so a site whose print would be 0 is 1.
///
/// ```
/// let print = urinorm::store::site_print(b"example.com");
/// assert_eq!(print, urinorm::store::site_print(b"example.com"));
/// assert_ne!(print, urinorm::store::site_print(b"example.org"));
/// ```
pub fn site_print(site: &[u8]) -> u64 {
    let print = fingerprint(site);
    let print = u64::from_be_bytes(print[..8].try_into().expect("8 bytes"));
    print.max(NO_SITE + 1)
}

impl Store {
    /// What its sites are (`host`, `domain`), once it keeps budgets.
    pub fn sites(&self) -> Option<&str> {
        self.manifest.sites.as_ref().map(|s| s.by.as_str())
    }

    /// Keeps each key's site from now on, a site being a `by` (`host`,
    /// `domain`); keys admitted before have none and count in no budget.
    /// A store that keeps sites of another kind is refused.
    pub fn keep_sites(&mut self, by: &str) -> Result<(), StoreError> {
        match self.sites() {
            Some(kept) if kept == by => return Ok(()),
            Some(kept) => {
                return Err(StoreError::SitesMismatch {
                    dir: self.dir.clone(),
                    kept: kept.to_string(),
                    wanted: by.to_string(),
                });
            }
            None => {}
        }
        self.writable()?;
        let mut next = self.manifest.clone();
        next.sites = Some(manifest::Sites {
            by: by.to_string(),
            names: 0,
        });
        truncate_names(&self.dir, 0)?;
        next.write(&self.dir)?;
        self.manifest = next;
        Ok(())
    }

    /// The keys it holds of each site by its clock (not expired, not
    /// forgotten), read from every run: about 24 bytes a site.
    pub fn site_counts(&self) -> Result<SiteCounts, StoreError> {
        let mut counts = SiteCounts::default();
        if self.sites().is_none() {
            return Ok(counts);
        }
        merge_runs(&self.runs, |entry| {
            if entry.site != NO_SITE && self.clock.judge(entry.stamp) == Holding::Held {
                *counts.entry(entry.site).or_default() += 1;
            }
            Ok(())
        })?;
        Ok(counts)
    }

    /// The names of the sites it has met.
    pub fn site_names(&self) -> Result<SiteNames, StoreError> {
        match &self.manifest.sites {
            Some(sites) => read_names(&self.dir, sites.names),
            None => Ok(SiteNames::default()),
        }
    }
}

/// Appends `names` to the file of site names in `dir`, whose first
/// `committed` bytes are committed (a tail past them, a killed writer's,
/// is cut off first), synced. Returns its new committed length.
pub(crate) fn append_names(
    dir: &Path,
    committed: u64,
    names: &[(u64, Vec<u8>)],
) -> Result<u64, StoreError> {
    let path = dir.join(NAMES_FILE);
    let mut bytes = Vec::new();
    for (print, name) in names {
        let name = &name[..name.len().min(MAX_NAME_BYTES)];
        let start = bytes.len();
        bytes.extend_from_slice(&print.to_le_bytes());
        bytes.extend_from_slice(&(name.len() as u16).to_le_bytes());
        bytes.extend_from_slice(name);
        let checksum = crc32fast::hash(&bytes[start..]);
        bytes.extend_from_slice(&checksum.to_le_bytes());
    }
    let mut file = truncate_names(dir, committed)?;
    let written = file.write_all(&bytes).and_then(|()| file.sync_data());
    written.map_err(StoreError::io(&path, "write"))?;
    Ok(committed + bytes.len() as u64)
}

/// The file of site names, made if missing (its directory entry synced),
/// cut to its `committed` bytes, open at its end.
fn truncate_names(dir: &Path, committed: u64) -> Result<File, StoreError> {
    let path = dir.join(NAMES_FILE);
    let existed = path.exists();
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(StoreError::io(&path, "open"))?;
    file.set_len(committed)
        .map_err(StoreError::io(&path, "write"))?;
    if !existed {
        manifest::sync_dir(dir)?;
    }
    Ok(file)
}

/// The names in the first `committed` bytes of the file of site names in
/// `dir`, each record checked.
pub(crate) fn read_names(dir: &Path, committed: u64) -> Result<SiteNames, StoreError> {
    let path = dir.join(NAMES_FILE);
    let mut names = SiteNames::default();
    if committed == 0 {
        return Ok(names);
    }
    let mut bytes = Vec::new();
    let read = File::open(&path).and_then(|f| f.take(committed).read_to_end(&mut bytes));
    read.map_err(StoreError::io(&path, "read"))?;
    let damaged = |why: &str| StoreError::damaged(&path, why);
    if (bytes.len() as u64) < committed {
        return Err(damaged("is cut short: it lacks names the manifest counts"));
    }
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let (print, name, after) = record(rest).ok_or_else(|| {
            damaged("has a record of a site's name whose checksum does not match")
        })?;
        names.insert(print, name.to_vec());
        rest = after;
    }
    Ok(names)
}

/// The first record of `bytes`, checked: its site print, its name, and
/// the bytes after it.
fn record(bytes: &[u8]) -> Option<(u64, &[u8], &[u8])> {
    let print = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let len = u16::from_le_bytes(bytes.get(8..10)?.try_into().ok()?) as usize;
    let end = 10 + len;
    let checksum = u32::from_le_bytes(bytes.get(end..end + 4)?.try_into().ok()?);
    (crc32fast::hash(&bytes[..end]) == checksum)
        .then(|| (print, &bytes[10..end], &bytes[end + 4..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_appended_read_back_and_a_killed_tail_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        let first = vec![(7, b"a.example".to_vec()), (9, b"b.example".to_vec())];
        let committed = append_names(dir.path(), 0, &first).unwrap();
        // A killed writer's tail, never committed.
        append_names(dir.path(), committed, &[(11, b"lost".to_vec())]).unwrap();
        let names = read_names(dir.path(), committed).unwrap();
        assert_eq!(names.len(), 2);
        assert_eq!(names[&9], b"b.example");
        let next = append_names(dir.path(), committed, &[(12, b"c".to_vec())]).unwrap();
        let names = read_names(dir.path(), next).unwrap();
        assert!(!names.contains_key(&11) && names[&12] == b"c");
    }

    #[test]
    fn a_flipped_byte_or_a_cut_file_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let committed = append_names(dir.path(), 0, &[(7, b"a.example".to_vec())]).unwrap();
        let path = dir.path().join(NAMES_FILE);
        let good = std::fs::read(&path).unwrap();
        for at in 0..good.len() {
            let mut bytes = good.clone();
            bytes[at] ^= 1;
            std::fs::write(&path, &bytes).unwrap();
            assert!(read_names(dir.path(), committed).is_err(), "byte {at}");
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        let e = read_names(dir.path(), committed).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
    }

    use crate::store::{Access, Clock, Config, Staging, Stamp};
    use std::time::Duration;

    /// Counts follow admissions, forgets and the clock's maximum age, and
    /// survive the store's reopening with their names.
    #[test]
    fn counts_are_the_keys_held_of_each_site() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::new([("rung", "scheme")]);
        let open = || Store::open(dir.path(), &config, Access::Write { wait: false }).unwrap();
        let mut store = open();
        store.set_clock(Clock::at(Stamp(1_000_000)));
        store.keep_sites("host").unwrap();
        let names = vec![(10, b"a.example".to_vec()), (20, b"b.example".to_vec())];
        let admitted = [(1u128, 10), (2, 10), (3, 20), (4, NO_SITE)];
        store
            .stage_sited(admitted.into_iter(), Staging::Admit { renewed: 0 }, names)
            .unwrap();
        store.publish().unwrap();
        let counts = store.site_counts().unwrap();
        assert_eq!((counts[&10], counts[&20], counts.len()), (2, 1, 2));
        store.stage([2u128].into_iter(), Staging::Forget).unwrap();
        store.publish().unwrap();
        assert_eq!(store.site_counts().unwrap()[&10], 1);
        drop(store);
        let mut store = open();
        assert_eq!(store.sites(), Some("host"));
        assert_eq!(store.site_names().unwrap()[&20], b"b.example");
        store.set_clock(Clock::at(Stamp(1_000_000)));
        assert_eq!(store.site_counts().unwrap().values().sum::<u64>(), 2);
        store.set_clock(Clock::at(Stamp(1_000_100)).with_max_age(Duration::from_secs(50)));
        assert!(store.site_counts().unwrap().is_empty(), "all expired");
        let e = store.keep_sites("domain").unwrap_err();
        assert!(e.to_string().contains("counts its budgets by host"), "{e}");
        store.verify().unwrap();
    }

    #[test]
    fn no_site_print_is_no_site() {
        assert_ne!(site_print(b""), NO_SITE);
    }
}
