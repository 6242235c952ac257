//! A run joined with a seen store ([`crate::store`]: the store itself, which
//! this module only reads and stages), one of two ways.
//!
//! In bulk, whether a class was admitted by an earlier run is known only
//! once the whole batch is read and its fingerprints are joined with the
//! store in one sorted pass (the store is never probed key by key). The
//! output waits in its own file (or a spool) in the meantime; once the join
//! has said which classes the store holds, their lines are removed, and the
//! classes it did not hold are staged as the store's next run.
//!
//! Live ([`Live`]: line-buffered, or verdicts, whose answers cannot wait),
//! each batch's new classes are looked up as the batch is decided, and the
//! keys admitted are committed as the output goes out.
//!
//! It knows classes, their fingerprints and the spool's lines; not how a
//! class was decided, nor how the store keeps its files.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use rayon::prelude::*;

use super::Halt;
use super::budget::{Budget, Spending};
use super::caps::SiteNumbers;
use super::set::DedupSet;
use crate::fingerprint::fingerprint;
use crate::store::{Entry, Holding, Probe, Staging, Store, StoreError};

/// A class's fingerprint, its number in output order and its size in
/// lines: 24 bytes, sorted by fingerprint for the join.
#[derive(Clone, Copy, Debug, Default)]
struct ClassPrint {
    high: u64,
    low: u64,
    /// The class's number; its top two bits say what the store holds of
    /// it ([`HELD`], [`EXPIRED`]).
    number: u32,
    size: u32,
}

const HELD: u32 = 1 << 31;
const EXPIRED: u32 = 1 << 30;
const NUMBER: u32 = EXPIRED - 1;

impl ClassPrint {
    fn new(print: u128, number: u32, size: u32) -> ClassPrint {
        ClassPrint {
            high: (print >> 64) as u64,
            low: print as u64,
            number,
            size,
        }
    }

    fn print(&self) -> u128 {
        (u128::from(self.high) << 64) | u128::from(self.low)
    }

    fn is_held(&self) -> bool {
        self.number & HELD != 0
    }

    fn is_expired(&self) -> bool {
        self.number & EXPIRED != 0
    }
}

impl Probe for ClassPrint {
    fn print(&self) -> u128 {
        ClassPrint::print(self)
    }

    fn found(&mut self, _: Entry, holding: Holding) {
        self.number &= NUMBER;
        self.number |= match holding {
            Holding::Absent => 0,
            Holding::Held => HELD,
            Holding::Expired => EXPIRED,
        };
    }
}

/// The fingerprints of a run's classes, in output order as they are added.
#[derive(Default)]
pub(crate) struct Classes {
    prints: Vec<ClassPrint>,
    /// What did not fit a [`ClassPrint`], if anything did not.
    too_large: Option<&'static str>,
}

impl Classes {
    /// Adds the next class by its key and size.
    pub(crate) fn push(&mut self, key: &[u8], size: u64) {
        self.add(u128::from_be_bytes(fingerprint(key)), size);
    }

    /// Adds the classes of a counting `set` (the shard of each, in
    /// first-seen order, in `order`), fingerprinted on `pool`, before any
    /// other. The set's tables go first: the fingerprints take their
    /// memory, so that a run joined with a store holds no more at its peak
    /// than 18 bytes a class (its set's order and sizes) beside what a
    /// plain run holds.
    pub(crate) fn take_set(
        &mut self,
        pool: &rayon::ThreadPool,
        set: &mut DedupSet,
        order: &[u16],
        maps: &[&[u8]],
    ) {
        debug_assert!(self.prints.is_empty(), "a set's classes come first");
        if order.len() > NUMBER as usize {
            self.too_large = Some(ON_TOO_MANY_KEYS);
            return;
        }
        set.drop_tables();
        self.prints = vec![ClassPrint::default(); order.len()];
        // Raised by any class too large, rather than a pass over all after.
        let oversized = AtomicBool::new(false);
        let fill = |number: usize, key: &[u8], size: u64| {
            let size = u32::try_from(size).ok().filter(|&size| size < u32::MAX);
            if size.is_none() {
                oversized.store(true, Ordering::Relaxed);
            }
            let print = u128::from_be_bytes(fingerprint(key));
            ClassPrint::new(print, number as u32, size.unwrap_or(u32::MAX))
        };
        pool.install(|| set.fill_in_order(order, maps, &mut self.prints, fill));
        if oversized.into_inner() {
            self.too_large = Some(ON_TOO_MANY_LINES);
        }
    }

    fn add(&mut self, print: u128, size: u64) {
        let number = match u32::try_from(self.prints.len()) {
            Ok(n) if n <= NUMBER => n,
            _ => {
                self.too_large = Some(ON_TOO_MANY_KEYS);
                return;
            }
        };
        let size = self.fit(size);
        self.prints.push(ClassPrint::new(print, number, size));
    }

    /// A class size as kept, or a note that one does not fit.
    fn fit(&mut self, size: u64) -> u32 {
        match u32::try_from(size) {
            Ok(size) if size < u32::MAX => size,
            _ => {
                self.too_large = Some(ON_TOO_MANY_LINES);
                u32::MAX
            }
        }
    }
}

const ON_TOO_MANY_KEYS: &str = "more than 1073741823 distinct keys";
const ON_TOO_MANY_LINES: &str = "a key on more than 4294967294 lines";

/// What the store said of a run's classes.
pub(crate) struct Verdicts {
    /// One bit per class, by number: set where the store holds it.
    held: Vec<u64>,
    held_counts: Held,
}

/// How much of a run a seen store held.
#[derive(Clone, Copy, Default)]
pub(crate) struct Held {
    pub(crate) classes: u64,
    pub(crate) lines: u64,
    /// Classes it held past the maximum age: written and admitted again,
    /// not counted in `classes`.
    pub(crate) expired: u64,
}

impl Verdicts {
    pub(crate) fn held(&self) -> Held {
        self.held_counts
    }

    fn is_held(&self, class: u64) -> bool {
        self.held
            .get((class / 64) as usize)
            .is_some_and(|word| word >> (class % 64) & 1 == 1)
    }
}

/// A run's classes joined with the store: sorted by fingerprint, each
/// marked held or not.
pub(crate) struct Joined {
    prints: Vec<ClassPrint>,
    pub(crate) verdicts: Verdicts,
}

/// Joins `classes` with `store` on `pool`.
pub(crate) fn join(
    pool: &rayon::ThreadPool,
    store: &Store,
    classes: Classes,
) -> Result<Joined, StoreError> {
    if let Some(what) = classes.too_large {
        return Err(StoreError::TooLarge { what });
    }
    let mut prints = classes.prints;
    pool.install(|| prints.par_sort_unstable_by_key(ClassPrint::print));
    pool.install(|| store.lookup(&mut prints))?;
    let mut verdicts = Verdicts {
        held: vec![0; prints.len().div_ceil(64)],
        held_counts: Held::default(),
    };
    for class in &prints {
        verdicts.held_counts.expired += u64::from(class.is_expired());
        if class.is_held() {
            let number = class.number & NUMBER;
            verdicts.held[number as usize / 64] |= 1 << (number % 64);
            verdicts.held_counts.classes += 1;
            verdicts.held_counts.lines += u64::from(class.size);
        }
    }
    Ok(Joined { prints, verdicts })
}

impl Joined {
    /// When `store` is open for writing, stages its next run: the classes
    /// it does not hold (new, or expired: admitted again), or with
    /// `forget`, tombstones for those it does.
    pub(crate) fn stage(&self, store: &mut Store, forget: bool) -> Result<(), StoreError> {
        if !store.is_writable() {
            return Ok(());
        }
        let prints = self.prints.iter();
        match forget {
            true => store.stage(
                prints
                    .filter(|c| c.is_held() || c.is_expired())
                    .map(ClassPrint::print),
                Staging::Forget,
            )?,
            false => store.stage(
                prints.filter(|c| !c.is_held()).map(ClassPrint::print),
                Staging::Admit {
                    renewed: self.verdicts.held_counts.expired,
                },
            )?,
        };
        Ok(())
    }
}

/// A store joined with the whole run at the end, and what the join stages
/// ([`Joined::stage`]).
pub(crate) struct Bulk<'s> {
    pub(crate) store: &'s mut Store,
    pub(crate) forget: bool,
}

/// How a run uses a seen store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SeenMode {
    Off,
    /// Joined with the whole batch at the end.
    Bulk,
    /// Consulted batch by batch.
    Live,
}

/// Keys admitted and written out, not yet committed.
#[derive(Default)]
pub(crate) struct Admitted {
    prints: Vec<u128>,
    /// Under a budget, each print's site number; else empty.
    sites: Vec<u32>,
    sited: bool,
    /// How many of them the store held, expired.
    renewed: u64,
}

/// What the writer has handed over to commit.
#[derive(Default)]
struct Pending {
    admitted: Admitted,
    /// Batches handed over so far, for [`Live::commit_through`].
    batches: u64,
}

impl Admitted {
    /// Keys to admit, each with its site number when `sited` (a budget).
    pub(crate) fn new(sited: bool) -> Admitted {
        Admitted {
            sited,
            ..Admitted::default()
        }
    }

    pub(crate) fn push(&mut self, print: u128, renewed: bool, site: u32) {
        self.prints.push(print);
        if self.sited {
            self.sites.push(site);
        }
        self.renewed += u64::from(renewed);
    }
}

/// A seen store consulted batch by batch, shared by the stage that looks
/// classes up and the writer's side, which commits what it has written.
pub(crate) struct Live<'s> {
    store: Mutex<&'s mut Store>,
    /// Keys admitted and written out, not yet committed.
    pending: Mutex<Pending>,
    /// Raised when a batch is handed over.
    handed_over: Condvar,
    /// Under a budget: what is spent, and the site numbers it names.
    budget: Option<(Mutex<Spending>, SiteNumbers)>,
}

impl<'s> Live<'s> {
    /// Consults `store`, its runs' filters kept in memory: lookups come a
    /// batch at a time, each key reading a block only where a filter lets
    /// it through.
    /// Under `budget`, the store's counts of each site are spent.
    pub(crate) fn new(
        store: &'s mut Store,
        budget: Option<Budget>,
    ) -> Result<Live<'s>, StoreError> {
        store.keep_filters()?;
        let budget = budget
            .map(|budget| {
                Ok::<_, StoreError>((
                    Mutex::new(Spending::start(budget, store)?),
                    SiteNumbers::named(),
                ))
            })
            .transpose()?;
        Ok(Live {
            store: Mutex::new(store),
            pending: Mutex::new(Pending::default()),
            handed_over: Condvar::new(),
            budget,
        })
    }

    /// Under a budget, the numbers the workers give sites (they keep names).
    pub(crate) fn site_numbers(&self) -> Option<&SiteNumbers> {
        self.budget.as_ref().map(|(_, numbers)| numbers)
    }

    /// Under a budget, calls `spend` with what is spent and the site
    /// numbers, once (a batch's classes together, in input order).
    pub(crate) fn with_budget(&self, spend: impl FnOnce(&mut Spending, &SiteNumbers)) {
        if let Some((spending, numbers)) = &self.budget {
            spend(
                &mut spending.lock().unwrap_or_else(|p| p.into_inner()),
                numbers,
            );
        }
    }

    fn store(&self) -> std::sync::MutexGuard<'_, &'s mut Store> {
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Looks `probes` (ascending) up in the store, on `pool`.
    pub(crate) fn lookup<P: Probe>(
        &self,
        pool: &rayon::ThreadPool,
        probes: &mut [P],
    ) -> Result<(), StoreError> {
        let store = self.store();
        pool.install(|| store.lookup(probes))
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `admitted`, one batch's keys written out, to commit.
    pub(crate) fn admit(&self, admitted: &mut Admitted) {
        let mut pending = self.pending();
        pending.admitted.prints.append(&mut admitted.prints);
        pending.admitted.sites.append(&mut admitted.sites);
        pending.admitted.sited = admitted.sited;
        pending.admitted.renewed += std::mem::take(&mut admitted.renewed);
        pending.batches += 1;
        self.handed_over.notify_all();
    }

    /// The keys handed over so far.
    fn take_pending(&self) -> Admitted {
        std::mem::take(&mut self.pending().admitted)
    }

    /// Stages `admitted` in `store`: under a budget, each key with its
    /// site, and the sites met since the last commit named.
    fn stage(&self, store: &mut Store, mut admitted: Admitted) -> Result<u64, StoreError> {
        let renewed = Staging::Admit {
            renewed: admitted.renewed,
        };
        let Some((spending, _)) = &self.budget else {
            admitted.prints.sort_unstable();
            return store.stage(admitted.prints.into_iter(), renewed);
        };
        let mut spending = spending.lock().unwrap_or_else(|p| p.into_inner());
        let mut sited: Vec<(u128, u64)> = admitted
            .prints
            .iter()
            .zip(&admitted.sites)
            .map(|(&print, &site)| (print, spending.print(site)))
            .collect();
        sited.sort_unstable_by_key(|&(print, _)| print);
        store.stage_sited(sited.into_iter(), renewed, spending.take_names())
    }

    /// Commits the keys admitted so far, if any. The store is held from
    /// before they are taken until they are published: once this returns,
    /// every key handed over before the call is in the store, whichever
    /// thread committed it.
    pub(crate) fn commit(&self) -> Result<(), StoreError> {
        let mut store = self.store();
        let pending = self.take_pending();
        if pending.prints.is_empty() {
            return Ok(());
        }
        self.stage(&mut store, pending)?;
        store.publish().map(drop)
    }

    /// Waits until the writer has handed over `batches` batches, then
    /// commits: every key they admitted is then the store's to answer for.
    /// Returns false, committing nothing, if `halt` is raised first (the
    /// writer stopped).
    pub(crate) fn commit_through(&self, batches: u64, halt: &Halt) -> Result<bool, StoreError> {
        let mut pending = self.pending();
        while pending.batches < batches {
            if halt.raised() {
                return Ok(false);
            }
            let wait = std::time::Duration::from_millis(20);
            pending = match self.handed_over.wait_timeout(pending, wait) {
                Ok((pending, _)) => pending,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        drop(pending);
        self.commit().map(|()| true)
    }

    /// Stages the keys admitted and not yet committed, for the caller to
    /// publish once the output is in place.
    pub(crate) fn stage_pending(&self) -> Result<(), StoreError> {
        let mut store = self.store();
        let pending = self.take_pending();
        if store.is_writable() {
            self.stage(&mut store, pending)?;
        }
        Ok(())
    }
}

/// Writing the temporary copy of the output failed (a full disk, say):
/// carried as the inner error of the `io::Error` the writer reports, so
/// that the caller can say what to do about it.
#[derive(Debug)]
pub struct SpoolError {
    /// The directory it was in.
    dir: String,
    source: io::Error,
}

impl std::fmt::Display for SpoolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dir = crate::escape::escape_str(&self.dir);
        write!(
            f,
            "{} (in the temporary copy of the output under '{dir}')",
            self.source
        )
    }
}

impl std::error::Error for SpoolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The output while the run is read, when it cannot be written where it
/// goes (standard output, a pipe): an unnamed temporary file, gone with the
/// process however it ends.
pub(crate) struct Spool {
    file: File,
    /// Where it is, for messages.
    dir: String,
}

impl Spool {
    pub(crate) fn create(dir: &Path) -> io::Result<Spool> {
        Ok(Spool {
            file: tempfile::tempfile_in(dir)?,
            dir: dir.display().to_string(),
        })
    }

    fn error(&self, source: io::Error) -> io::Error {
        let kind = source.kind();
        let dir = self.dir.clone();
        io::Error::new(kind, SpoolError { dir, source })
    }

    /// Copies the spooled lines to `out`, leaving out the classes the store
    /// holds; `header_marks` says where header lines are (before how many
    /// class lines each came). Returns the bytes written.
    pub(crate) fn write_unheld(
        self,
        verdicts: &Verdicts,
        header_marks: &[u64],
        out: &mut dyn Write,
    ) -> io::Result<u64> {
        let mut written = 0;
        let kept = for_each_kept(&self.file, verdicts, header_marks, |span, _| {
            written += span.len() as u64;
            out.write_all(span)
        });
        kept.map_err(|e| self.error(e))?;
        Ok(written)
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf).map_err(|e| self.error(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Removes the lines of the classes the store holds from `file`, the
/// output written in full (a temporary file, not yet in place), moving
/// what follows up and cutting the file short: no second copy of the
/// output is written, and the lines before the first one removed are not
/// touched at all. Returns the bytes left.
pub(crate) fn remove_held(
    file: &File,
    verdicts: &Verdicts,
    header_marks: &[u64],
) -> io::Result<u64> {
    let mut moved = Moved::default();
    for_each_kept(file, verdicts, header_marks, |span, at| {
        moved.keep(file, span, at)
    })?;
    let end = moved.flush(file)?;
    file.set_len(end)?;
    Ok(end)
}

/// The kept lines of a file being filtered in place, moved toward its
/// start through a buffer: one write a [`COPY_BYTES`], not one for each
/// stretch between two lines left out.
#[derive(Default)]
struct Moved {
    /// Where the kept bytes end in the file, the buffered ones included.
    end: u64,
    buffered: Vec<u8>,
}

impl Moved {
    /// Keeps `span`, which lies at `at` in the file.
    fn keep(&mut self, file: &File, span: &[u8], at: u64) -> io::Result<()> {
        // Until a line is left out, the kept bytes are where they belong.
        if self.buffered.is_empty() && at == self.end {
            self.end += span.len() as u64;
            return Ok(());
        }
        // Kept bytes only ever move towards the start, over bytes already
        // read: the buffer goes where nothing unread lies.
        self.buffered.extend_from_slice(span);
        self.end += span.len() as u64;
        if self.buffered.len() >= COPY_BYTES {
            self.flush(file)?;
        }
        Ok(())
    }

    /// Writes what is buffered; returns where the kept bytes end.
    fn flush(&mut self, file: &File) -> io::Result<u64> {
        let start = self.end - self.buffered.len() as u64;
        file.write_all_at(&self.buffered, start)?;
        self.buffered.clear();
        Ok(self.end)
    }
}

/// Calls `keep(bytes, offset)` on the runs of consecutive lines of `file`
/// to keep, in order (each run where it lies in the file): a header line
/// always, a class line unless the store holds its class. `header_marks`
/// says before how many class lines each header line came.
fn for_each_kept(
    file: &File,
    verdicts: &Verdicts,
    header_marks: &[u64],
    mut keep: impl FnMut(&[u8], u64) -> io::Result<()>,
) -> io::Result<()> {
    let mut marks = header_marks.iter().copied().peekable();
    let mut class = 0u64;
    let mut keep_next = || {
        if marks.next_if_eq(&class).is_some() {
            return true;
        }
        class += 1;
        !verdicts.is_held(class - 1)
    };
    let mut block = vec![0u8; COPY_BYTES];
    // Where `block` starts in the file, and how much of it is read.
    let (mut at, mut filled) = (0u64, 0);
    loop {
        let n = file.read_at(&mut block[filled..], at + filled as u64)?;
        filled += n;
        let complete = match memchr::memrchr(b'\n', &block[..filled]) {
            Some(end) => end + 1,
            None if n == 0 => filled,
            None if filled == block.len() => {
                // A line longer than the block: grow it.
                block.resize(block.len() * 2, 0);
                continue;
            }
            None => continue,
        };
        // Runs of kept lines, cut only where a line is left out.
        let (mut run, mut line) = (0, 0);
        let unended = (complete > 0 && block[complete - 1] != b'\n').then_some(complete);
        for end in memchr::memchr_iter(b'\n', &block[..complete])
            .map(|end| end + 1)
            .chain(unended)
        {
            if !keep_next() {
                keep(&block[run..line], at + run as u64)?;
                run = end;
            }
            line = end;
        }
        keep(&block[run..complete], at + run as u64)?;
        block.copy_within(complete..filled, 0);
        filled -= complete;
        at += complete as u64;
        if n == 0 && filled == 0 {
            return Ok(());
        }
    }
}

/// How much of the output is read at a time.
const COPY_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// Verdicts holding the classes numbered in `held`.
    fn holding(held: &[u64], classes: u64) -> Verdicts {
        let mut verdicts = Verdicts {
            held: vec![0; classes.div_ceil(64) as usize],
            held_counts: Held {
                classes: held.len() as u64,
                lines: held.len() as u64,
                expired: 0,
            },
        };
        for &class in held {
            verdicts.held[class as usize / 64] |= 1 << (class % 64);
        }
        verdicts
    }

    /// Against a naive oracle: lines (a long one among them, past the read
    /// block) and headers, with each pattern of held classes, removed in
    /// place and copied from a spool.
    #[test]
    fn held_lines_go_and_the_rest_stays_in_order() {
        let long = "x".repeat(COPY_BYTES + 10);
        let classes: Vec<String> = (0..200)
            .map(|i| {
                if i == 77 {
                    long.clone()
                } else {
                    format!("http://h/{i}")
                }
            })
            .collect();
        // Header lines before classes 0, 0 and 150.
        let marks = [0, 0, 150];
        let mut text = String::new();
        let mut expected_all = Vec::new();
        for (i, class) in classes.iter().enumerate() {
            for _ in marks.iter().filter(|&&m| m == i as u64) {
                expected_all.push((None, "header"));
            }
            expected_all.push((Some(i as u64), class.as_str()));
        }
        for (_, line) in &expected_all {
            text.push_str(line);
            text.push('\n');
        }
        for held in [
            vec![],
            vec![0],
            vec![77],
            vec![199],
            (0..200).step_by(3).collect(),
            (0..200).collect(),
        ] {
            let verdicts = holding(&held, 200);
            let expected: String = expected_all
                .iter()
                .filter(|(class, _)| class.is_none_or(|c| !held.contains(&c)))
                .map(|(_, line)| format!("{line}\n"))
                .collect();
            let file = tempfile::tempfile().unwrap();
            file.write_all_at(text.as_bytes(), 0).unwrap();
            let left = remove_held(&file, &verdicts, &marks).unwrap();
            let mut got = vec![0; left as usize];
            file.read_exact_at(&mut got, 0).unwrap();
            assert_eq!(file.metadata().unwrap().len(), left);
            assert!(String::from_utf8(got).unwrap() == expected, "held {held:?}");
            let mut spool = Spool::create(&std::env::temp_dir()).unwrap();
            spool.write_all(text.as_bytes()).unwrap();
            let mut out = Vec::new();
            spool.write_unheld(&verdicts, &marks, &mut out).unwrap();
            assert!(out == expected.as_bytes(), "spooled, held {held:?}");
        }
    }
}
