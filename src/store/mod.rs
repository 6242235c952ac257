//! The seen store: every key admitted by earlier runs, kept on disk as
//! [`fingerprint`](crate::fingerprint)s, so that a crawler frontier's batches
//! are cut down to what was never admitted, across days and restarts.
//!
//! The design is DRUM's (IRLbot, Lee et al. 2008) and Heritrix's disk
//! fingerprint filter's: never a disk access per key, but large sorted
//! batches merged sequentially against sorted files.
//!
//! - A store is a directory of immutable **runs** (files of fingerprints in
//!   ascending order, each with a small fence index: `run`) and a
//!   **manifest** naming the live runs and the key configuration
//!   (`config`) they were made with (`manifest`).
//! - A batch's fingerprints are sorted and merge-joined against each run,
//!   reading only the blocks they fall in ([`Store::lookup`]); memory stays
//!   a few blocks and the fence, whatever the store's size.
//! - Each key carries the time of the commit that admitted it (`clock`):
//!   a run's [`Clock`] may count keys older than a maximum age as not held
//!   (they are admitted again, with the new time), [`Store::expire`] drops
//!   them for good, and [`Store::forget`] hides keys on request with
//!   tombstones. A key's newest entry, in the newest run that has one,
//!   decides.
//! - A commit writes the batch's new fingerprints as a new run, then
//!   replaces the manifest atomically ([`Store::stage`], [`Store::publish`]);
//!   runs are merged (`merge`) like the digits of a binary counter (a run
//!   no larger than the next newer one is merged with it), so equal batches make
//!   O(log n) runs, and never more than 32; [`Store::compact`] merges all. A kill at any instant leaves the previous commit or the new one;
//!   what a killed writer left behind is removed by the next writer.
//! - One writer at a time (`lock`); readers need no lock: they read the
//!   manifest and open its runs, a snapshot that later commits do not
//!   disturb.
//!
//! Runs may share a fingerprint (a key admitted again after it expired, a
//! tombstone); each run's entry in the manifest says what it adds to the
//! key count, so the count is their sum, and merging runs keeps only each
//! key's newest entry.
//!
//! It knows fingerprints, files and the configuration's text; not URIs,
//! lines or the pipeline.

mod clock;
mod config;
mod damage;
mod error;
mod filter;
mod history;
pub(crate) mod lock;
pub(crate) mod manifest;
mod merge;
pub(crate) mod run;
mod salvage;
mod sites;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rayon::prelude::*;

pub use clock::{Clock, ClockError, Holding, Stamp, parse_duration};
pub use config::Config;
pub use error::StoreError;
pub use history::{Exported, Imported, history_config, history_files};
use lock::WriterLock;
use manifest::{Manifest, RunEntry};
pub use merge::MergeWritten;
use merge::merge_runs;
use run::{Block, Run, RunWriter};
pub use run::{Entry, NO_SITE};
pub use salvage::{RunSalvaged, Salvaged};
pub use sites::{SiteCounts, SiteNames, site_print};

use crate::escape::escape_str;

/// A fingerprint being looked up.
pub trait Probe: Send {
    /// The fingerprint, as the number its big-endian bytes spell.
    fn print(&self) -> u128;
    /// Called for each run that has an entry for it, oldest run first, with
    /// the entry (a tombstone's stamp is the forgotten one) and what it
    /// says by the store's clock: the last call is the answer.
    fn found(&mut self, entry: Entry, holding: Holding);
}

/// A fingerprint asked about, with where it was asked.
pub(crate) struct Asked {
    pub(crate) print: u128,
    pub(crate) at: usize,
    pub(crate) holding: Holding,
}

impl Probe for Asked {
    fn print(&self) -> u128 {
        self.print
    }

    fn found(&mut self, _: Entry, holding: Holding) {
        self.holding = holding;
    }
}

/// How a store is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Look up only: no lock, no commit; the store must exist.
    ReadOnly,
    /// Look up and commit, holding the writer lock (made if missing);
    /// with `wait`, wait for another writer to finish rather than fail.
    Write { wait: bool },
}

/// A commit made ready by [`Store::stage`]: a run written and synced,
/// not yet live.
#[derive(Debug)]
struct Staged {
    id: u64,
    entries: u64,
    staging: Staging,
    /// Sites met for the first time, named at the commit.
    names: Vec<(u64, Vec<u8>)>,
}

impl Staged {
    /// What the run adds to the store's count of keys.
    fn adds(&self) -> i64 {
        match self.staging {
            Staging::Admit { renewed } => (self.entries - renewed.min(self.entries)) as i64,
            Staging::Forget => -(self.entries as i64),
        }
    }
}

/// What a staged run does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// Admits its prints with the clock's time; `renewed` of them are keys
    /// the store holds already (expired, admitted again).
    Admit { renewed: u64 },
    /// Forgets its prints, all of which the store holds (held or expired).
    Forget,
}

/// What a commit did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// Keys admitted (new, or expired and admitted again).
    pub admitted: u64,
    /// Of those, the keys admitted again (held, but expired).
    pub renewed: u64,
    /// Keys forgotten.
    pub forgotten: u64,
    /// Keys the store holds now.
    pub keys: u64,
    /// Runs it is made of now.
    pub runs: usize,
}

/// Whether a commit merges the runs it makes due at once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Merging {
    Now,
    Later,
}

/// An open seen store.
///
/// ```
/// use urinorm::store::{Access, Config, Holding, Staging, Store};
/// let dir = tempfile::tempdir()?;
/// let config = Config::new([("rung", "scheme")]);
/// let mut store = Store::open(dir.path(), &config, Access::Write { wait: false })?;
/// store.stage([1u128, 5, 9].into_iter(), Staging::Admit { renewed: 0 })?;
/// store.publish()?;
/// let held = store.holds(&[5, 6])?;
/// assert_eq!(held, [Holding::Held, Holding::Absent]);
/// assert_eq!(store.keys(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    manifest: Manifest,
    runs: Vec<Run>,
    lock: Option<WriterLock>,
    staged: Option<Staged>,
    clock: Clock,
    /// Whether its runs' filters are kept in memory ([`Store::keep_filters`]).
    filters: bool,
    /// What its commits since it was opened did, together.
    since_open: Committed,
}

/// How many times a reader re-reads the manifest when a run it names was
/// removed by a writer's compaction in between.
const SNAPSHOT_TRIES: usize = 20;

impl Store {
    /// Opens the store in `dir` for keys made with `config`, which must be
    /// the store's own; for writing, a missing store is made.
    pub fn open(dir: &Path, config: &Config, access: Access) -> Result<Store, StoreError> {
        let store = Store::open_with(dir, access, Some(config))?;
        if store.manifest.config != *config {
            return Err(StoreError::ConfigMismatch {
                dir: dir.to_path_buf(),
                stored: store.manifest.config.clone(),
                wanted: config.clone(),
            });
        }
        Ok(store)
    }

    /// Whether `dir` holds a store (its manifest), whatever its state.
    pub fn exists(dir: &Path) -> bool {
        dir.join(manifest::FILE).exists()
    }

    /// Opens an existing store whatever its configuration (to inspect,
    /// verify or compact it).
    pub fn open_existing(dir: &Path, access: Access) -> Result<Store, StoreError> {
        Store::open_with(dir, access, None)
    }

    fn open_with(dir: &Path, access: Access, new: Option<&Config>) -> Result<Store, StoreError> {
        let Access::Write { wait } = access else {
            let (manifest, runs) = snapshot(dir)?;
            return Ok(Store {
                dir: dir.to_path_buf(),
                manifest,
                runs,
                lock: None,
                staged: None,
                clock: Clock::system(),
                filters: false,
                since_open: Committed::default(),
            });
        };
        if new.is_some() {
            if dir.exists() && !dir.is_dir() {
                return Err(StoreError::NotAStore {
                    path: dir.to_path_buf(),
                    why: "it is a file; a seen store is a directory (name a new one, or one a run made)".into(),
                });
            }
            std::fs::create_dir_all(dir).map_err(StoreError::io(dir, "create"))?;
            // Before the lock file is made in it: a directory of other
            // things is left as it was.
            if !dir.join(manifest::FILE).exists() {
                check_new_store(dir)?;
            }
        } else if !dir.is_dir() {
            return Err(StoreError::Missing {
                dir: dir.to_path_buf(),
            });
        }
        let lock = WriterLock::acquire(dir, wait)?;
        let manifest = match (Manifest::read(dir)?, new) {
            (Some(manifest), _) => manifest,
            (None, Some(config)) => {
                check_new_store(dir)?;
                let manifest = Manifest::new(config.clone());
                manifest.write(dir)?;
                manifest
            }
            (None, None) => return Err(no_manifest(dir)),
        };
        remove_strays(dir, &manifest)?;
        damage::check(dir, &manifest)?;
        check_writable(dir)?;
        let runs = open_runs(dir, &manifest).map_err(missing_run)?;
        Ok(Store {
            dir: dir.to_path_buf(),
            manifest,
            runs,
            lock: Some(lock),
            staged: None,
            clock: Clock::system(),
            filters: false,
            since_open: Committed::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Notes in the writer lock that this process serves the store at
    /// `url`: a command that would write it then names the service.
    pub fn note_serving(&self, url: &str) -> Result<(), StoreError> {
        self.writable()?;
        self.lock
            .as_ref()
            .map_or(Ok(()), |lock| lock.note_serving(url))
    }

    /// The configuration its keys were made with.
    pub fn config(&self) -> &Config {
        &self.manifest.config
    }

    /// The distinct keys it holds.
    pub fn keys(&self) -> u64 {
        self.manifest.keys()
    }

    /// How many runs it is made of.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Its files: the manifest, the live runs, and the site names of a
    /// store that keeps budgets.
    pub fn files(&self) -> Vec<PathBuf> {
        let runs = self.runs.iter().map(|r| r.path().to_path_buf());
        let names = self
            .manifest
            .sites
            .as_ref()
            .map(|_| self.dir.join(sites::NAMES_FILE));
        std::iter::once(self.dir.join(manifest::FILE))
            .chain(runs)
            .chain(names)
            .collect()
    }

    /// The bytes its files take on disk (as far as they can be read).
    pub fn bytes(&self) -> u64 {
        self.files()
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum()
    }

    /// How many commits made it, and when the last one was.
    pub fn last_commit(&self) -> (u64, Option<SystemTime>) {
        (self.manifest.commit, self.manifest.committed_at)
    }

    /// The clock it stamps commits with and judges ages by (the system's
    /// time, no maximum age, until [`Store::set_clock`]).
    pub fn clock(&self) -> Clock {
        self.clock
    }

    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// Keeps each run's filter in memory from now on (2.5 bytes per key
    /// held), for lookups a few keys at a time: a key no run holds then
    /// reads no block in all but about 1 in 2,600 lookups per run (runs
    /// written before there were filters have none until they merge). A
    /// bulk join needs none: it reads the blocks its batch falls in, in
    /// order.
    pub fn keep_filters(&mut self) -> Result<(), StoreError> {
        self.filters = true;
        self.runs.iter_mut().try_for_each(Run::load_filter)
    }

    /// Opens run `path` of this store, with its filter if they are kept.
    fn open_run(&self, path: &Path) -> Result<Run, StoreError> {
        let mut run = Run::open(path, &self.manifest.config.id())?;
        if self.filters {
            run.load_filter()?;
        }
        Ok(run)
    }

    /// Whether it was opened for writing.
    pub fn is_writable(&self) -> bool {
        self.lock.is_some()
    }

    /// Calls [`Probe::found`] on each of `probes` the store has an entry
    /// for, run by run, oldest first. The probes must be in ascending order
    /// of print. Runs in parallel on the current rayon pool, a range of
    /// prints per task.
    pub fn lookup<P: Probe>(&self, probes: &mut [P]) -> Result<(), StoreError> {
        debug_assert!(probes.windows(2).all(|w| w[0].print() <= w[1].print()));
        if self.runs.is_empty() || probes.is_empty() {
            return Ok(());
        }
        let tasks = rayon::current_num_threads() * 4;
        let per_task = probes.len().div_ceil(tasks).max(BLOCK_PROBES);
        probes.par_chunks_mut(per_task).try_for_each(|probes| {
            let mut block = Block::default();
            self.runs
                .iter()
                .try_for_each(|run| run.join(probes, &mut block, &self.clock))
        })
    }

    /// What the store says of each of `prints` (in any order).
    pub fn holds(&self, prints: &[u128]) -> Result<Vec<Holding>, StoreError> {
        let mut asked: Vec<Asked> = prints
            .iter()
            .enumerate()
            .map(|(at, &print)| Asked {
                print,
                at,
                holding: Holding::Absent,
            })
            .collect();
        asked.sort_unstable_by_key(|a| a.print);
        self.lookup(&mut asked)?;
        let mut held = vec![Holding::Absent; prints.len()];
        for a in asked {
            held[a.at] = a.holding;
        }
        Ok(held)
    }

    /// Writes `prints` (ascending; repeats are held once) as a run that
    /// admits or forgets them, synced but not yet live: [`Store::publish`]
    /// makes it so. A kill in between leaves the store as it was. Returns
    /// how many prints it staged.
    pub fn stage(
        &mut self,
        prints: impl Iterator<Item = u128>,
        staging: Staging,
    ) -> Result<u64, StoreError> {
        self.stage_sited(prints.map(|print| (print, NO_SITE)), staging, Vec::new())
    }

    /// [`Store::stage`] of prints each with its site ([`NO_SITE`] for
    /// none; the store must keep sites, [`Store::keep_sites`], for any
    /// other), and `names`, the sites met for the first time, named when
    /// the commit is published.
    pub fn stage_sited(
        &mut self,
        prints: impl Iterator<Item = (u128, u64)>,
        staging: Staging,
        names: Vec<(u64, Vec<u8>)>,
    ) -> Result<u64, StoreError> {
        let stamp = match staging {
            Staging::Admit { .. } => self.clock.now(),
            Staging::Forget => Stamp::FORGOTTEN,
        };
        let entries = prints.map(|(print, site)| Entry { print, stamp, site });
        let staged = self.stage_entries(entries, staging)?;
        self.name_sites(names);
        Ok(staged)
    }

    /// Names `names` (sites met for the first time) at the staged commit.
    fn name_sites(&mut self, names: Vec<(u64, Vec<u8>)>) {
        if let Some(staged) = &mut self.staged {
            staged.names = names;
        }
    }

    /// [`Store::stage`] of entries that each carry their stamp (an
    /// imported history's admission times): ascending by print, the first
    /// of equal prints kept. Admitting, no stamp may be a tombstone's.
    pub(crate) fn stage_entries(
        &mut self,
        entries: impl Iterator<Item = Entry>,
        staging: Staging,
    ) -> Result<u64, StoreError> {
        self.writable()?;
        let id = self.manifest.next_run;
        let mut entries = entries.peekable();
        // Nothing to write: no file to write and sync, only the commit to count.
        if entries.peek().is_none() {
            self.staged = Some(Staged {
                id,
                entries: 0,
                staging,
                names: Vec::new(),
            });
            return Ok(0);
        }
        let path = manifest::temp_path(&self.dir, id);
        let sites = self.manifest.sites.is_some();
        let entries = RunWriter::write(&path, self.manifest.config.id(), sites, |writer| {
            entries.try_for_each(|entry| writer.push(entry))
        })?;
        self.staged = Some(Staged {
            id,
            entries,
            staging,
            names: Vec::new(),
        });
        Ok(entries)
    }

    /// Makes the staged run live (an empty stage adds none): one atomic
    /// replacement of the manifest, which also counts the commit. Then
    /// merges runs so that each is larger than the next newer one.
    pub fn publish(&mut self) -> Result<Committed, StoreError> {
        self.publish_then(Merging::Now)
    }

    /// As [`Store::publish`], leaving the merges it would make to the
    /// caller ([`Store::write_due_merge`], [`Store::install_merge`]), so
    /// that lookups need not wait for them.
    pub fn publish_unmerged(&mut self) -> Result<Committed, StoreError> {
        self.publish_then(Merging::Later)
    }

    fn publish_then(&mut self, merging: Merging) -> Result<Committed, StoreError> {
        self.writable()?;
        let mut next = self.manifest.clone();
        next.commit += 1;
        next.committed_at = Some(self.clock.now().time());
        let staged = self.staged.take();
        let mut counts = Committed::default();
        // Named before the manifest that counts the names.
        if let (Some(staged), Some(sites)) = (&staged, &mut next.sites)
            && !staged.names.is_empty()
        {
            sites.names = sites::append_names(&self.dir, sites.names, &staged.names)?;
        }
        // An empty stage wrote no file.
        if let Some(staged) = staged.filter(|s| s.entries > 0) {
            let (id, entries, adds) = (staged.id, staged.entries, staged.adds());
            match staged.staging {
                Staging::Forget => counts.forgotten = entries,
                Staging::Admit { renewed } => {
                    counts.admitted = entries;
                    counts.renewed = renewed.min(entries);
                }
            }
            let temp = manifest::temp_path(&self.dir, id);
            let path = self.dir.join(manifest::run_file_name(id));
            std::fs::rename(&temp, &path).map_err(StoreError::io(&path, "rename"))?;
            next.next_run = id + 1;
            next.runs.push(RunEntry { id, entries, adds });
            self.runs.push(self.open_run(&path)?);
        }
        next.write(&self.dir)?;
        self.manifest = next;
        if merging == Merging::Now {
            while let Some(at) = self.merge_due() {
                self.merge(at..at + 2, None)?;
            }
        }
        self.since_open.admitted += counts.admitted;
        self.since_open.renewed += counts.renewed;
        self.since_open.forgotten += counts.forgotten;
        Ok(Committed {
            keys: self.keys(),
            runs: self.runs.len(),
            ..counts
        })
    }

    /// What every commit since it was opened did together (a live run
    /// commits many times): keys admitted, renewed and forgotten; the
    /// store's keys and runs now.
    pub fn committed_since_open(&self) -> Committed {
        Committed {
            keys: self.keys(),
            runs: self.runs.len(),
            ..self.since_open
        }
    }

    fn committed(&self) -> Committed {
        Committed {
            keys: self.keys(),
            runs: self.runs.len(),
            ..Committed::default()
        }
    }

    /// Reads every block of every run and checks its checksum and order
    /// (as [`Store::verify`] does, one run after another), calling `pace`
    /// with each block's bytes: it may sleep to bound the rate, and ends
    /// the scrub early by returning `false`. Returns whether it read
    /// everything.
    pub fn scrub(&self, pace: &mut dyn FnMut(u64) -> bool) -> Result<bool, StoreError> {
        for run in &self.runs {
            if !run.verify_paced(pace)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Copies the store, as this handle reads it (one commit's snapshot),
    /// to `dest`, a directory that must not exist: its runs (from the files
    /// this handle holds open, so a writer's compaction meanwhile does not
    /// matter) and its manifest, into a temporary directory beside `dest`,
    /// synced and verified, then renamed to `dest`. Needs no writer lock.
    /// Returns the copy, opened for reading.
    pub fn backup(&self, dest: &Path) -> Result<Store, StoreError> {
        if dest.exists() {
            return Err(StoreError::NotAStore {
                path: dest.to_path_buf(),
                why: "it exists already; a backup goes to a new directory".into(),
            });
        }
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".urinorm-backup-")
            .tempdir_in(parent)
            .map_err(StoreError::io(parent, "create a directory in"))?;
        for (run, entry) in self.runs.iter().zip(&self.manifest.runs) {
            run.copy_to(&temp.path().join(entry.file_name()))?;
        }
        let mut copied = self.manifest.clone();
        if let Some(sites) = &mut copied.sites {
            let names: Vec<_> = self.site_names()?.into_iter().collect();
            sites.names = sites::append_names(temp.path(), 0, &names)?;
        }
        copied.write(temp.path())?;
        Store::open_existing(temp.path(), Access::ReadOnly)?.verify()?;
        let temp = temp.keep();
        std::fs::rename(&temp, dest).map_err(StoreError::io(dest, "rename a backup to"))?;
        manifest::sync_dir(parent)?;
        Store::open_existing(dest, Access::ReadOnly)
    }

    /// Reads every block of every run, checking checksums and order, and
    /// that the keys they hold together are as many as the manifest says.
    pub fn verify(&self) -> Result<(), StoreError> {
        for (run, entry) in self.runs.iter().zip(&self.manifest.runs) {
            if run.count() != entry.entries {
                return Err(StoreError::damaged(
                    run.path(),
                    format!(
                        "holds {} fingerprints where the manifest says {}",
                        run.count(),
                        entry.entries
                    ),
                ));
            }
        }
        self.runs.par_iter().try_for_each(Run::verify)?;
        self.site_names()?;
        let held = self.ages(&[])?.iter().sum::<u64>();
        if held != self.keys() {
            return Err(StoreError::damaged(
                &self.dir.join(manifest::FILE),
                format!("counts {} keys where its runs hold {held}", self.keys()),
            ));
        }
        Ok(())
    }

    /// The keys held, by age: how many were admitted at or after each of
    /// `since` (newest first) and before the one before it, then the rest;
    /// `since.len() + 1` counts. Reads every run.
    pub fn ages(&self, since: &[Stamp]) -> Result<Vec<u64>, StoreError> {
        debug_assert!(since.windows(2).all(|w| w[0] >= w[1]));
        let mut counts = vec![0; since.len() + 1];
        merge_runs(&self.runs, |Entry { stamp, .. }| {
            if !stamp.is_forgotten() {
                counts[since.partition_point(|&s| stamp < s)] += 1;
            }
            Ok(())
        })?;
        Ok(counts)
    }

    fn writable(&self) -> Result<(), StoreError> {
        match self.lock {
            Some(_) => Ok(()),
            None => Err(StoreError::ReadOnly {
                dir: self.dir.clone(),
            }),
        }
    }
}

/// Probes per lookup task at least: a task should read many prints per block.
const BLOCK_PROBES: usize = 1 << 14;

/// The manifest of the store in `dir` and its runs, opened: a consistent
/// snapshot even while a writer commits and compacts (a run removed between
/// reading the manifest and opening it means a newer manifest: read again).
fn snapshot(dir: &Path) -> Result<(Manifest, Vec<Run>), StoreError> {
    let mut tries = 0;
    loop {
        let manifest = Manifest::read(dir)?.ok_or_else(|| match dir.is_dir() {
            true => no_manifest(dir),
            false => StoreError::Missing {
                dir: dir.to_path_buf(),
            },
        })?;
        damage::check(dir, &manifest)?;
        match open_runs(dir, &manifest) {
            Err(StoreError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound
                    && tries < SNAPSHOT_TRIES
                    && Manifest::read(dir)?.as_ref() != Some(&manifest) =>
            {
                tries += 1;
            }
            runs => return runs.map(|runs| (manifest, runs)).map_err(missing_run),
        }
    }
}

fn open_runs(dir: &Path, manifest: &Manifest) -> Result<Vec<Run>, StoreError> {
    let id = manifest.config.id();
    manifest
        .runs
        .iter()
        .map(|entry| Run::open(&dir.join(entry.file_name()), &id))
        .collect()
}

/// A run the manifest names that is not there is damage.
fn missing_run(e: StoreError) -> StoreError {
    match e {
        StoreError::Io { path, source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            StoreError::damaged(&path, "is missing, though the manifest names it")
        }
        other => other,
    }
}

/// What a directory without a manifest is: a store that lost it, when it
/// holds runs; otherwise not a store.
fn no_manifest(dir: &Path) -> StoreError {
    let names = dir_names(dir).unwrap_or_default();
    if names.iter().any(|n| manifest::run_id(n).is_some()) {
        return StoreError::damaged(
            &dir.join(manifest::FILE),
            "is missing, though the store holds runs",
        );
    }
    StoreError::NotAStore {
        path: dir.to_path_buf(),
        why: format!("it has no {} file", manifest::FILE),
    }
}

/// Refuses to make a store in a directory that holds anything but what a
/// store's own first moments may have left (its lock, temporary files):
/// another directory, or a store that lost its manifest.
fn check_new_store(dir: &Path) -> Result<(), StoreError> {
    for name in dir_names(dir)? {
        if manifest::run_id(&name).is_some() {
            return Err(no_manifest(dir));
        }
        if !manifest::is_store_file(&name) {
            return Err(StoreError::NotAStore {
                path: dir.to_path_buf(),
                why: format!(
                    "it has no {} file and holds other files ('{}'); give a new or empty directory",
                    manifest::FILE,
                    escape_str(&name)
                ),
            });
        }
    }
    Ok(())
}

/// Removes what a killed writer left: temporary files, and runs the
/// manifest does not name. Only a writer (holding the lock) does this.
fn remove_strays(dir: &Path, manifest: &Manifest) -> Result<(), StoreError> {
    for name in dir_names(dir)? {
        let stray = name.ends_with(".tmp")
            || manifest::run_id(&name).is_some_and(|id| manifest.runs.iter().all(|r| r.id != id))
            || damage::is_stale(dir, &name, manifest);
        if stray {
            let path = dir.join(&name);
            std::fs::remove_file(&path).map_err(StoreError::io(&path, "remove"))?;
        }
    }
    Ok(())
}

/// Makes (and unlinks) a file in the store's directory: a directory the
/// process may not write fails here, before any work, not at the first
/// commit after the output was written.
fn check_writable(dir: &Path) -> Result<(), StoreError> {
    tempfile::tempfile_in(dir)
        .map(drop)
        .map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            action: "write in",
            source,
        })
}

fn dir_names(dir: &Path) -> Result<Vec<String>, StoreError> {
    let entries = std::fs::read_dir(dir).map_err(StoreError::io(dir, "read"))?;
    entries
        .map(|e| {
            e.map(|e| e.file_name().to_string_lossy().into_owned())
                .map_err(StoreError::io(dir, "read"))
        })
        .collect()
}

#[cfg(test)]
mod tests;
