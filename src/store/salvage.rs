//! Salvage: a damaged store rebuilt from what is intact, the way out that
//! needs no backup. Every entry of every block whose checksum matches, of
//! every run whose header is sound (a run cut short keeps its leading
//! blocks), is merged into one new run (each key's newest entry decides, as
//! in any merge); what was kept and lost is counted, run by run, and told.
//!
//! It knows the store's runs and manifest; not what the keys mean.

use std::path::Path;

use super::damage;
use super::lock::WriterLock;
use super::manifest::{self, Manifest, RunEntry};
use super::merge::{Keep, merge_entries, put_in_place, remove_runs};
use super::run::{Run, RunWriter, Salvaging};
use super::{Stamp, StoreError, missing_run, no_manifest, remove_strays};

/// What [`Store::salvage`](super::Store::salvage) kept and lost.
#[derive(Debug, Default)]
pub struct Salvaged {
    /// The keys the manifest counted before, and those the store holds now.
    pub keys_before: u64,
    pub keys: u64,
    /// Entries lost: those of damaged blocks, and of runs that would not
    /// open (as many as the manifest says they held). An entry is a key
    /// as one run knew it: a key lost from a newer run may still be held
    /// from an older one.
    pub entries_lost: u64,
    pub blocks_lost: u64,
    /// The runs that would not open at all, lost whole.
    pub runs_lost: u64,
    /// What was found damaged, a sentence each.
    pub damage: Vec<String>,
    /// Each damaged run's entries kept and lost, oldest run first.
    pub damaged_runs: Vec<RunSalvaged>,
}

/// What salvage kept of one damaged run.
#[derive(Debug, PartialEq, Eq)]
pub struct RunSalvaged {
    /// The run's file name.
    pub file: String,
    pub kept: u64,
    pub lost: u64,
}

impl super::Store {
    /// Rebuilds the store in `dir` from its intact blocks: takes the
    /// writer lock (waiting for it with `wait`), merges every intact
    /// entry into one run, and makes it the store's only run in one
    /// atomic replacement of the manifest. A store with no damage comes
    /// out compacted, every key kept. A kill at any instant leaves the
    /// damaged store or the salvaged one.
    ///
    /// ```
    /// use urinorm::store::{Access, Config, Store};
    /// let dir = tempfile::tempdir().unwrap();
    /// let config = Config::new([("rung", "syntax")]);
    /// drop(Store::open(dir.path(), &config, Access::Write { wait: false }).unwrap());
    /// let salvaged = Store::salvage(dir.path(), false).unwrap();
    /// assert_eq!((salvaged.keys, salvaged.entries_lost), (0, 0));
    /// ```
    pub fn salvage(dir: &Path, wait: bool) -> Result<Salvaged, StoreError> {
        if !dir.is_dir() {
            return Err(StoreError::Missing {
                dir: dir.to_path_buf(),
            });
        }
        let _lock = WriterLock::acquire(dir, wait)?;
        let manifest = Manifest::read(dir)?.ok_or_else(|| no_manifest(dir))?;
        remove_strays(dir, &manifest)?;
        let mut salvaged = Salvaged {
            keys_before: manifest.keys(),
            ..Salvaged::default()
        };
        let id = manifest.config.id();
        let mut runs = Vec::new();
        // The entries of each run lost before its blocks are read: all of
        // a run that does not open, the missing blocks' of one cut short.
        let mut lost = Vec::new();
        for entry in &manifest.runs {
            let path = dir.join(entry.file_name());
            match Run::open_damaged(&path, &id).map_err(missing_run) {
                Ok((run, missing, damage)) => {
                    salvaged.damage.extend(damage.map(|e| e.to_string()));
                    runs.push(run);
                    lost.push((entry, missing));
                }
                Err(e @ StoreError::Damaged { .. }) => {
                    salvaged.runs_lost += 1;
                    salvaged.entries_lost += entry.entries;
                    salvaged.damage.push(e.to_string());
                    salvaged.damaged_runs.push(RunSalvaged {
                        file: entry.file_name(),
                        kept: 0,
                        lost: entry.entries,
                    });
                }
                Err(e) => return Err(e),
            }
        }
        let new_id = manifest.next_run;
        let temp = manifest::temp_path(dir, new_id);
        let mut readers: Vec<Salvaging<'_>> = runs.iter().map(Salvaging::new).collect();
        // Every run is merged, from the oldest: tombstones have nothing
        // left to hide, and the count is exactly the entries written.
        let keep = Keep {
            tombstones: false,
            since: Stamp(1),
        };
        let sites = manifest.sites.is_some();
        let entries = RunWriter::write(&temp, id, sites, |writer| {
            merge_entries(&mut readers, |entry| match keep.keeps(entry.stamp) {
                true => writer.push(entry),
                false => Ok(()),
            })
        })?;
        for (reader, (entry, missing)) in readers.into_iter().zip(lost) {
            let run_lost = reader.entries_lost + missing;
            salvaged.blocks_lost += reader.blocks_lost;
            salvaged.entries_lost += run_lost;
            salvaged
                .damage
                .extend(reader.first_damage.map(|e| e.to_string()));
            if run_lost > 0 {
                salvaged.damaged_runs.push(RunSalvaged {
                    file: entry.file_name(),
                    kept: entry.entries - run_lost.min(entry.entries),
                    lost: run_lost,
                });
            }
        }
        salvaged.damaged_runs.sort_by(|a, b| a.file.cmp(&b.file));
        let mut next = manifest.clone();
        next.next_run = new_id + 1;
        next.runs = put_in_place(dir, new_id, entries)?
            .map(|_| RunEntry {
                id: new_id,
                entries,
                adds: entries as i64,
            })
            .into_iter()
            .collect();
        next.write(dir)?;
        drop(runs);
        remove_runs(dir, &manifest.runs);
        damage::clear(dir)?;
        salvaged.keys = next.keys();
        Ok(salvaged)
    }
}
