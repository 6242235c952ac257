//! Merging runs: which two a commit makes due (a binary counter, at most
//! [`MAX_RUNS`]), every run into one (compact, expire), a merge written
//! while lookups go on and then installed, and the merge of entries by
//! print that salvage shares. It knows runs and the manifest's entries;
//! not the lock or the clock's times beyond a merge's oldest kept.

use std::path::{Path, PathBuf};

use super::manifest::{self, RunEntry};
use super::run::{Entries, Entry, Run, RunWriter};
use super::{Committed, Stamp, Store, StoreError};

/// A merge written and synced, not yet live: see [`Store::write_due_merge`].
#[derive(Debug)]
pub struct MergeWritten {
    /// The runs it replaces.
    range: std::ops::Range<usize>,
    entry: RunEntry,
}

/// Runs beyond this many are merged whatever their sizes (batches that
/// shrink one after another would otherwise each leave a run).
const MAX_RUNS: usize = 32;

impl Store {
    /// The first of two neighbouring runs to merge, if any: the newest two
    /// when the older is not larger (a binary counter: batches of one size
    /// make O(log n) runs, each key rewritten O(log n) times); past
    /// [`MAX_RUNS`], the smallest neighbouring pair. A batch much smaller
    /// than the store so costs only its own run.
    pub(super) fn merge_due(&self) -> Option<usize> {
        let keys: Vec<u64> = self.manifest.runs.iter().map(|r| r.entries).collect();
        let n = keys.len();
        if n >= 2 && keys[n - 2] <= keys[n - 1] {
            return Some(n - 2);
        }
        (n > MAX_RUNS).then(|| {
            (0..n - 1)
                .min_by_key(|&i| keys[i] + keys[i + 1])
                .expect("more than one run")
        })
    }

    /// Merges every run into one.
    pub fn compact(&mut self) -> Result<Committed, StoreError> {
        self.writable()?;
        if self.runs.len() > 1 {
            self.merge(0..self.runs.len(), None)?;
        }
        Ok(self.committed())
    }

    /// Removes for good every key admitted before `before` (and every
    /// tombstone): all runs are merged into one without them, as
    /// [`Store::compact`] does. Returns the commit's figures, `forgotten`
    /// being the keys removed.
    pub fn expire(&mut self, before: Stamp) -> Result<Committed, StoreError> {
        self.writable()?;
        let keys = self.keys();
        if !self.runs.is_empty() {
            self.merge(0..self.runs.len(), Some(before))?;
        }
        Ok(Committed {
            forgotten: keys - self.keys(),
            ..self.committed()
        })
    }

    /// Merges runs `range` into one (dropping keys admitted before
    /// `expire_before`), and makes it live in their place.
    pub(super) fn merge(
        &mut self,
        range: std::ops::Range<usize>,
        expire_before: Option<Stamp>,
    ) -> Result<(), StoreError> {
        let written = self.write_merge(range, expire_before)?;
        self.install_merge(written)
    }

    /// The merge the store is due, written and synced but not yet live
    /// ([`Store::install_merge`] makes it so), if any. It only reads the
    /// store: lookups may go on meanwhile (`urinorm serve` reads while its
    /// committer merges), as long as nothing else writes it before the
    /// merge is installed.
    pub fn write_due_merge(&self) -> Result<Option<MergeWritten>, StoreError> {
        self.writable()?;
        self.merge_due()
            .map(|at| self.write_merge(at..at + 2, None))
            .transpose()
    }

    /// Every run merged into one (without the keys admitted before
    /// `expire_before`, and without tombstones), written and synced but not
    /// yet live, as [`Store::write_due_merge`] writes a merge: what
    /// [`Store::compact`] and [`Store::expire`] do, for a caller that lets
    /// lookups go on while it is written. `None` when there is nothing to
    /// merge.
    pub fn write_compaction(
        &self,
        expire_before: Option<Stamp>,
    ) -> Result<Option<MergeWritten>, StoreError> {
        self.writable()?;
        let wanted = match expire_before {
            Some(_) => !self.runs.is_empty(),
            None => self.runs.len() > 1,
        };
        wanted
            .then(|| self.write_merge(0..self.runs.len(), expire_before))
            .transpose()
    }

    /// Writes runs `range` merged as a new run, synced, under its
    /// temporary name.
    fn write_merge(
        &self,
        range: std::ops::Range<usize>,
        expire_before: Option<Stamp>,
    ) -> Result<MergeWritten, StoreError> {
        let id = self.manifest.next_run;
        let temp = manifest::temp_path(&self.dir, id);
        // A tombstone hides older entries: in a merge from the oldest run
        // there are none left to hide.
        let keep = Keep {
            tombstones: range.start > 0,
            since: expire_before.unwrap_or(Stamp(1)),
        };
        let sites = self.manifest.sites.is_some();
        let entries = RunWriter::write(&temp, self.manifest.config.id(), sites, |writer| {
            merge_runs(&self.runs[range.clone()], |entry| {
                match keep.keeps(entry.stamp) {
                    true => writer.push(entry),
                    false => Ok(()),
                }
            })
        })?;
        // Merging changes no answer, so the count it adds is the sum of
        // the runs'; unless entries were dropped for their age, a merge of
        // every run then adds exactly its entries.
        let adds = match expire_before {
            Some(_) => entries as i64,
            None => self.manifest.runs[range.clone()]
                .iter()
                .map(|r| r.adds)
                .sum(),
        };
        Ok(MergeWritten {
            range,
            entry: RunEntry { id, entries, adds },
        })
    }

    /// Makes a merge written by [`Store::write_due_merge`] live: the runs
    /// it merged are replaced by it in one atomic replacement of the
    /// manifest.
    pub fn install_merge(&mut self, written: MergeWritten) -> Result<(), StoreError> {
        let MergeWritten { range, entry } = written;
        let (id, temp) = (entry.id, manifest::temp_path(&self.dir, entry.id));
        if id != self.manifest.next_run || range.end > self.runs.len() {
            return Err(StoreError::Io {
                path: temp,
                action: "install a merge written before another change to",
                source: std::io::Error::other("the store changed since the merge was written"),
            });
        }
        let mut next = self.manifest.clone();
        next.next_run = id + 1;
        let merged = match put_in_place(&self.dir, id, entry.entries)? {
            Some(path) => Some((entry, Run::open(&path, &next.config.id())?)),
            None => None,
        };
        let (entry, run) = merged.unzip();
        let merged = run.is_some();
        let old: Vec<RunEntry> = next.runs.splice(range.clone(), entry).collect();
        next.write(&self.dir)?;
        self.manifest = next;
        self.runs.splice(range.clone(), run);
        remove_runs(&self.dir, &old);
        // Only once the merged runs' filters are gone: never both in memory.
        if merged && self.filters {
            self.runs[range.start].load_filter()?;
        }
        Ok(())
    }
}

/// Which entries a merge keeps.
pub(super) struct Keep {
    pub(super) tombstones: bool,
    /// The oldest stamp kept.
    pub(super) since: Stamp,
}

impl Keep {
    pub(super) fn keeps(&self, stamp: Stamp) -> bool {
        match stamp.is_forgotten() {
            true => self.tombstones,
            false => stamp >= self.since,
        }
    }
}

/// Puts the run written as `id` (under its temporary name) in place, and
/// returns its path; one that holds nothing (every key forgotten or
/// expired) is removed instead, and no run takes the merged ones' place.
pub(super) fn put_in_place(
    dir: &Path,
    id: u64,
    entries: u64,
) -> Result<Option<PathBuf>, StoreError> {
    let temp = manifest::temp_path(dir, id);
    if entries == 0 {
        let _ = std::fs::remove_file(&temp);
        return Ok(None);
    }
    let path = dir.join(manifest::run_file_name(id));
    std::fs::rename(&temp, &path).map_err(StoreError::io(&path, "rename"))?;
    Ok(Some(path))
}

/// Removes runs the manifest no longer names; one left behind is removed
/// by the next writer.
pub(super) fn remove_runs(dir: &Path, runs: &[RunEntry]) {
    for entry in runs {
        let _ = std::fs::remove_file(dir.join(entry.file_name()));
    }
}

/// Calls `each` on the newest entry of every print of `runs` (oldest run
/// first, each ascending), in ascending order of print.
pub(super) fn merge_runs(
    runs: &[Run],
    each: impl FnMut(Entry) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let mut readers: Vec<_> = runs.iter().map(Run::reader).collect();
    merge_entries(&mut readers, each)
}

/// [`merge_runs`] of any readers of entries, oldest first.
pub(super) fn merge_entries(
    readers: &mut [impl Entries],
    mut each: impl FnMut(Entry) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heads = BinaryHeap::new();
    for (i, reader) in readers.iter_mut().enumerate() {
        if let Some(entry) = reader.next_entry()? {
            heads.push(Reverse((entry.print, i, entry)));
        }
    }
    // Equal prints come out oldest run first: the last of them is newest.
    let mut newest: Option<Entry> = None;
    while let Some(Reverse((print, i, entry))) = heads.pop() {
        if let Some(last) = newest.filter(|last| last.print != print) {
            each(last)?;
        }
        newest = Some(entry);
        if let Some(next) = readers[i].next_entry()? {
            heads.push(Reverse((next.print, i, next)));
        }
    }
    newest.map_or(Ok(()), each)
}
