//! The seen service's core (`urinorm serve`): one seen store shared by
//! many clients, each request a body of lines answered line by line as
//! `dedup --emit verdict` answers them, keys admitted in memory and
//! committed by one thread for every client together.
//!
//! It knows bodies, verdicts and the store; nothing of HTTP, sockets or
//! threads beyond its committer. Every key answered `new` (or `expired`)
//! is at every instant in the store or in one of two pending sets (admitted,
//! or being committed), so across all requests each key is `new` once.
//!
//! ```
//! use urinorm::mapper::{Columns, NormalizeLines};
//! use urinorm::normalize::{Normalizer, Rung};
//! use urinorm::key::KeyFormat;
//! use urinorm::seen::{Access, Config, Store};
//! use urinorm::serve::{Service, Settings};
//!
//! let dir = tempfile::tempdir()?;
//! let lines = NormalizeLines::new(Normalizer::new(Rung::Syntax), KeyFormat::Canonical, Columns::default());
//! let store = Store::open(dir.path(), &Config::new(lines.key_settings()), Access::Write { wait: false })?;
//! let service = Service::start(store, lines, Settings::default())?;
//! let first = service.answer(b"HTTP://Example.com/a\nhttp://example.com/a\n", true)?;
//! assert_eq!(first.body, b"new\thttp://example.com/a\ndup\thttp://example.com/a\n");
//! let again = service.answer(b"http://EXAMPLE.com/a", false)?;
//! assert_eq!(again.body, b"seen\thttp://example.com/a\n");
//! assert_eq!(service.close()?.admitted, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::mapper::NormalizeLines;
use crate::pipeline::chunks::{Chunk, ChunkBytes};
use crate::pipeline::{Buffers, Emit, Fate, Fates, Hashes, Mode, Options, process, verdicts};
use crate::seen::{Committed, Config, Holding, Staging, Store, StoreError};

/// The words of the verdicts a service gives, in the order of
/// [`Answer::counts`].
pub const VERDICTS: [&str; 7] = [
    "new", "dup", "seen", "expired", "rejected", "blank", "filtered",
];

/// How a service commits and what it takes.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Commit the keys admitted at least this often: a kill loses at most
    /// this much (those keys are answered `new` again).
    pub commit_every: Duration,
    /// Commit early once this many keys wait; past twice as many, adds
    /// wait for a commit to end (the bound on memory).
    pub pending_keys: usize,
    /// Longer lines are `rejected` (never truncated).
    pub max_line_bytes: usize,
}

/// Keys waiting before a commit comes early: a set of about 34 MiB.
pub const PENDING_KEYS: usize = 1 << 20;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            commit_every: Duration::from_secs(1),
            pending_keys: PENDING_KEYS,
            max_line_bytes: crate::pipeline::MAX_LINE_BYTES,
        }
    }
}

/// One body answered.
#[derive(Debug, Default)]
pub struct Answer {
    /// One verdict line for each line of the body, in order.
    pub body: Vec<u8>,
    /// How many lines got each verdict of [`VERDICTS`].
    pub counts: [u64; VERDICTS.len()],
}

/// Why a body was not answered.
#[derive(Debug)]
pub enum Refused {
    /// The service is stopping: nothing more is admitted.
    Stopping,
    /// Commits are failing and the keys waiting have filled their memory:
    /// nothing more is admitted until a commit succeeds.
    Full(String),
    /// The store could not be read.
    Store(StoreError),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Stopping => write!(f, "the service is stopping"),
            Refused::Full(why) => write!(
                f,
                "the keys waiting to be committed fill their memory and the last commit failed ({why}); nothing more is admitted until one succeeds"
            ),
            Refused::Store(e) => write!(f, "the seen store could not be read: {e}"),
        }
    }
}

impl std::error::Error for Refused {}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Refused {
        Refused::Store(e)
    }
}

/// What a commit did, for whoever watches the service (metrics).
#[derive(Clone, Debug)]
pub struct CommitReport {
    pub keys: usize,
    pub took: Duration,
    /// The commit's error, if it failed (its keys wait for the next one).
    pub error: Option<String>,
}

/// The store's state and the service's, as `/v1/stats` tells it.
#[derive(Clone, Debug)]
pub struct Status {
    pub config: Config,
    pub keys: u64,
    pub runs: usize,
    pub store_bytes: u64,
    /// The store's commit number and when it was made.
    pub commit: u64,
    pub committed_at: Option<SystemTime>,
    /// Keys admitted, not yet committed.
    pub pending_keys: usize,
    /// Commits this service made, and how many failed.
    pub commits: u64,
    pub failed_commits: u64,
    /// The last commit's error, while commits fail.
    pub failing: Option<String>,
}

type PrintSet = HashSet<u128, ahash::RandomState>;

/// Told of every commit ([`Service::start_watched`]).
pub type Observer = Box<dyn Fn(&CommitReport) + Send + Sync>;

/// Keys admitted and not yet in the store.
#[derive(Default)]
struct Pending {
    admitted: PrintSet,
    /// Of `admitted`, keys the store holds, expired (admitted again).
    renewed: u64,
    /// Taken from `admitted` by a commit that has not ended: still
    /// answered from here until it has.
    committing: PrintSet,
    /// Nothing more is admitted.
    closed: bool,
    /// The last commit's error, until one succeeds.
    failing: Option<String>,
}

impl Pending {
    fn holds(&self, print: u128) -> bool {
        self.admitted.contains(&print) || self.committing.contains(&print)
    }
}

/// What requests and the committer share.
struct Shared {
    lines: NormalizeLines,
    options: Options,
    store: RwLock<Store>,
    pending: Mutex<Pending>,
    /// Raised for the committer: keys past the bound, or closing.
    wake: Condvar,
    /// Raised by the committer when a commit has ended, for adds waiting
    /// for room.
    settled: Condvar,
    /// Counts commits that ended: a store read older than the last one
    /// may miss keys that have left the pending sets.
    epoch: AtomicU64,
    settings: Settings,
    commits: AtomicU64,
    failed_commits: AtomicU64,
    observer: Option<Observer>,
}

/// A seen store served: see the module's comment.
pub struct Service {
    shared: Arc<Shared>,
    /// Taken by the first [`Service::close`].
    committer: Mutex<Option<JoinHandle<Result<(), StoreError>>>>,
}

/// The fate of each distinct key of a body, as the store and the pending
/// sets decide it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decision {
    New,
    Held,
    Expired,
}

impl Service {
    /// Serves `store` (opened for writing) for keys `lines` makes, its
    /// committer started.
    pub fn start(
        store: Store,
        lines: NormalizeLines,
        settings: Settings,
    ) -> Result<Service, StoreError> {
        Service::start_watched(store, lines, settings, None)
    }

    /// As [`Service::start`], `observer` told of every commit.
    pub fn start_watched(
        mut store: Store,
        lines: NormalizeLines,
        settings: Settings,
        observer: Option<Observer>,
    ) -> Result<Service, StoreError> {
        // Asked a few keys at a time: the filters spare most block reads.
        store.keep_filters()?;
        let options = Options {
            mode: Mode::Dedup(Emit::Verdict),
            max_line_bytes: settings.max_line_bytes,
            ..Options::default()
        };
        let shared = Arc::new(Shared {
            lines,
            options,
            store: RwLock::new(store),
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            settled: Condvar::new(),
            epoch: AtomicU64::new(0),
            settings,
            commits: AtomicU64::new(0),
            failed_commits: AtomicU64::new(0),
            observer,
        });
        let path = shared_dir(&shared);
        let committer = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("urinorm-commit".into())
                .spawn(move || shared.commit_loop())
                .map_err(|source| StoreError::Io {
                    path,
                    action: "start the committer thread of",
                    source,
                })?
        };
        Ok(Service {
            shared,
            committer: Mutex::new(Some(committer)),
        })
    }

    /// Answers every line of `body` as `dedup --emit verdict` does, in
    /// order; with `admit`, new keys are admitted (else nothing is).
    pub fn answer(&self, body: &[u8], admit: bool) -> Result<Answer, Refused> {
        let shared = &self.shared;
        let chunk = Chunk {
            source: 0,
            offset: 0,
            bytes: ChunkBytes::Borrowed(body),
            input_bytes: body.len() as u64,
            // A request's lines are each answered, whatever they hold.
            binary: false,
        };
        let hashes = Hashes {
            fingerprints: true,
            ..Hashes::default()
        };
        let p = process(
            chunk,
            Buffers::default(),
            &shared.lines,
            hashes,
            &shared.options,
        );
        let (firsts, classes) = first_lines(&p.prints);
        let decisions = shared.decide(&firsts, admit)?;
        let fates = Fates::default().group(&p.accepted);
        for (i, &(at, first)) in classes.iter().enumerate() {
            let fate = match (decisions[at as usize], first) {
                (Decision::Held, _) => Fate::Held,
                (Decision::New, true) => Fate::First,
                (Decision::Expired, true) => Fate::Expired,
                (_, false) => Fate::Duplicate,
            };
            fates.set(i, fate);
        }
        let mut answer = Answer {
            body: Vec::with_capacity(body.len() + body.len() / 8 + 16),
            counts: [0; VERDICTS.len()],
        };
        for verdict in verdicts(&p, |i| fates.get(i)) {
            verdict.push_line(&mut answer.body);
            let word = verdict.word();
            if let Some(n) = VERDICTS.iter().position(|&w| w == word) {
                answer.counts[n] += 1;
            }
        }
        Ok(answer)
    }

    /// The store's state and the service's.
    pub fn status(&self) -> Status {
        let shared = &self.shared;
        let (pending_keys, failing) = {
            let pending = shared.pending();
            let keys = pending.admitted.len() + pending.committing.len();
            (keys, pending.failing.clone())
        };
        let store = shared.store();
        let (commit, committed_at) = store.last_commit();
        let store_bytes = store.bytes();
        Status {
            config: store.config().clone(),
            keys: store.keys(),
            runs: store.runs(),
            store_bytes,
            commit,
            committed_at,
            pending_keys,
            commits: shared.commits.load(Ordering::Relaxed),
            failed_commits: shared.failed_commits.load(Ordering::Relaxed),
            failing,
        }
    }

    /// Stops admitting (a body asked after is refused as
    /// [`Refused::Stopping`]) and commits everything admitted. Returns what
    /// every commit did together. The store's lock goes with the service.
    pub fn close(&self) -> Result<Committed, StoreError> {
        self.stop()?;
        let store = self.shared.store();
        Ok(store.committed_since_open())
    }

    /// Stops admitting and ends the committer, which commits last.
    fn stop(&self) -> Result<(), StoreError> {
        {
            let mut pending = self.shared.pending();
            pending.closed = true;
            self.shared.wake.notify_all();
        }
        let committer = self
            .committer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match committer {
            Some(committer) => committer.join().unwrap_or_else(|_| {
                Err(StoreError::Io {
                    path: shared_dir(&self.shared),
                    action: "commit to",
                    source: std::io::Error::other("the committer thread panicked"),
                })
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Service {
    /// A service dropped unclosed still commits what it admitted.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The distinct fingerprints of a body, in order of their first line, and
/// for each line which of them it has and whether it is that first line:
/// the first line decides a key, a repeat is `dup` (or `seen`, as its
/// first), as within one dedup run.
fn first_lines(prints: &[u128]) -> (Vec<u128>, Vec<(u32, bool)>) {
    let mut firsts: Vec<u128> = Vec::new();
    let mut first_of: ahash::HashMap<u128, u32> = ahash::HashMap::default();
    let classes = prints
        .iter()
        .map(|&print| {
            let next = firsts.len() as u32;
            let at = *first_of.entry(print).or_insert(next);
            if at == next {
                firsts.push(print);
            }
            (at, at == next)
        })
        .collect();
    (firsts, classes)
}

fn shared_dir(shared: &Shared) -> std::path::PathBuf {
    shared.store().dir().to_path_buf()
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn store(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Decides each of `firsts` (distinct): held by the store or pending,
    /// expired, or new; with `admit`, admits the new and expired ones.
    fn decide(&self, firsts: &[u128], admit: bool) -> Result<Vec<Decision>, Refused> {
        // The store is read without the pending lock, so requests read it
        // together. A commit that ends meanwhile takes its keys out of the
        // pending sets: then the store is asked again, under the lock,
        // where no commit can end.
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut holdings = self.store().holds(firsts)?;
        let mut pending = self.room_to_admit(admit)?;
        if self.epoch.load(Ordering::Acquire) != epoch {
            holdings = self.store().holds(firsts)?;
        }
        let decisions = firsts
            .iter()
            .zip(holdings)
            .map(|(&print, holding)| {
                let decision = match holding {
                    _ if pending.holds(print) => return Decision::Held,
                    Holding::Held => return Decision::Held,
                    Holding::Expired => Decision::Expired,
                    Holding::Absent => Decision::New,
                };
                if admit {
                    pending.admitted.insert(print);
                    pending.renewed += u64::from(decision == Decision::Expired);
                }
                decision
            })
            .collect();
        if pending.admitted.len() >= self.settings.pending_keys {
            self.wake.notify_all();
        }
        Ok(decisions)
    }

    /// The pending sets, once there is room for more keys. Past
    /// [`Shared::full_at`] keys pending, an add waits for a commit to end
    /// (clients faster than the committer are held back, rather than
    /// memory growing), or while commits fail, is refused.
    fn room_to_admit(&self, admit: bool) -> Result<MutexGuard<'_, Pending>, Refused> {
        let mut pending = self.pending();
        loop {
            if pending.closed {
                return Err(Refused::Stopping);
            }
            let full = admit && pending.admitted.len() + pending.committing.len() >= self.full_at();
            match (&pending.failing, full) {
                (_, false) => return Ok(pending),
                (Some(why), true) => return Err(Refused::Full(why.clone())),
                (None, true) => {}
            }
            // Timed, to see a failure or a close as well.
            let wait = Duration::from_millis(50);
            pending = match self.settled.wait_timeout(pending, wait) {
                Ok((pending, _)) => pending,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Past this many keys pending, nothing more is admitted until a
    /// commit ends.
    fn full_at(&self) -> usize {
        self.settings.pending_keys.saturating_mul(2)
    }

    /// The committer: commits every `commit_every`, or sooner when enough
    /// keys wait, until closed; then once more.
    fn commit_loop(&self) -> Result<(), StoreError> {
        let mut due = Instant::now() + self.settings.commit_every;
        loop {
            let (closing, renewed) = {
                let mut pending = self.wait_until_due(due);
                due = Instant::now() + self.settings.commit_every;
                let closing = pending.closed;
                if pending.admitted.is_empty() {
                    match closing {
                        true => return Ok(()),
                        false => continue,
                    }
                }
                // Still answered from there until the commit has ended.
                pending.committing = std::mem::take(&mut pending.admitted);
                (closing, std::mem::take(&mut pending.renewed))
            };
            let started = Instant::now();
            let committed = self.commit(renewed);
            let keys = self.settle(committed.as_ref().err(), renewed);
            // The merges change no answer: lookups go on while they are
            // written, and wait only while each is put in place.
            let merged = committed.and_then(|()| self.merge());
            let error = merged.as_ref().err().map(ToString::to_string);
            let counter = match &error {
                None => &self.commits,
                Some(why) => {
                    self.pending().failing = Some(why.clone());
                    &self.failed_commits
                }
            };
            counter.fetch_add(1, Ordering::Relaxed);
            if let Some(observer) = &self.observer {
                let took = started.elapsed();
                observer(&CommitReport { keys, took, error });
            }
            if closing {
                return merged;
            }
        }
    }

    /// The pending keys once a commit is due: `due` has come, enough keys
    /// wait, or the service is closing.
    fn wait_until_due(&self, due: Instant) -> MutexGuard<'_, Pending> {
        let mut pending = self.pending();
        loop {
            let now = Instant::now();
            let ready = pending.closed
                || now >= due
                || pending.admitted.len() >= self.settings.pending_keys;
            if ready {
                return pending;
            }
            pending = match self.wake.wait_timeout(pending, due - now) {
                Ok((pending, _)) => pending,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Stages and publishes the keys being committed.
    fn commit(&self, renewed: u64) -> Result<(), StoreError> {
        let mut prints: Vec<u128> = self.pending().committing.iter().copied().collect();
        prints.sort_unstable();
        let mut store = self.store.write().unwrap_or_else(|p| p.into_inner());
        store.stage(prints.into_iter(), Staging::Admit { renewed })?;
        store.publish_unmerged().map(drop)
    }

    /// Ends a commit: its keys leave the pending sets (the store answers
    /// for them now), or if it `failed`, wait for the next one. Returns how
    /// many it had.
    fn settle(&self, failed: Option<&StoreError>, renewed: u64) -> usize {
        let mut pending = self.pending();
        let keys = pending.committing.len();
        // Its table goes, not only its keys: an idle service holds none.
        let mut committed = PrintSet::default();
        match failed {
            None => {
                std::mem::swap(&mut pending.committing, &mut committed);
                pending.failing = None;
            }
            Some(e) => {
                let kept = std::mem::take(&mut pending.committing);
                pending.admitted.extend(kept);
                pending.renewed += renewed;
                pending.failing = Some(e.to_string());
            }
        }
        // A request that read the store before this must read it again.
        self.epoch.fetch_add(1, Ordering::Release);
        self.settled.notify_all();
        drop(pending);
        drop(committed);
        keys
    }

    /// Makes the merges the store is due, each written while lookups read
    /// the store, then put in place under its write lock.
    fn merge(&self) -> Result<(), StoreError> {
        loop {
            // The read lock is let go before the write lock is taken.
            let written = self.store().write_due_merge()?;
            let Some(written) = written else {
                return Ok(());
            };
            let mut store = self.store.write().unwrap_or_else(|p| p.into_inner());
            store.install_merge(written)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::KeyFormat;
    use crate::mapper::Columns;
    use crate::normalize::{Normalizer, Rung};
    use crate::seen::Access;

    fn service(dir: &std::path::Path, settings: Settings) -> Service {
        let lines = NormalizeLines::new(
            Normalizer::new(Rung::Scheme),
            KeyFormat::Canonical,
            Columns::default(),
        );
        let config = Config::new(lines.key_settings());
        let store = Store::open(dir, &config, Access::Write { wait: false }).unwrap();
        Service::start(store, lines, settings).unwrap()
    }

    fn words(answer: &Answer) -> Vec<String> {
        String::from_utf8_lossy(&answer.body)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Threads asking overlapping keys in their own spellings while the
    /// committer commits every millisecond: one `new` per key in all.
    #[test]
    fn racing_requests_and_commits_give_one_new_per_key() {
        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            commit_every: Duration::from_millis(1),
            pending_keys: 64,
            ..Settings::default()
        };
        let service = service(dir.path(), settings);
        let keys = 2_000;
        let answers: Vec<Vec<String>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..6)
                .map(|t| {
                    let service = &service;
                    scope.spawn(move || {
                        let mut seen = Vec::new();
                        for batch in 0..40 {
                            let body: String = (0..100)
                                .map(|i| {
                                    let k = (t * 331 + batch * 100 + i) % keys;
                                    match (t + i) % 3 {
                                        0 => format!("http://h{k}.example/p\n"),
                                        1 => format!("HTTP://H{k}.EXAMPLE:80/p\n"),
                                        _ => format!("http://h{k}.example/./p\n"),
                                    }
                                })
                                .collect();
                            let answer = service.answer(body.as_bytes(), true).unwrap();
                            assert_eq!(answer.counts.iter().sum::<u64>(), 100);
                            seen.extend(words(&answer));
                        }
                        seen
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut news = std::collections::HashMap::<String, u32>::new();
        for line in answers.iter().flatten() {
            let (word, key) = line.split_once('\t').unwrap();
            assert!(["new", "dup", "seen"].contains(&word), "{line}");
            *news.entry(key.to_string()).or_default() += u32::from(word == "new");
        }
        assert!(news.values().all(|&n| n == 1), "a key new twice or never");
        let committed = service.close().unwrap();
        assert_eq!(committed.admitted, news.len() as u64);
        assert_eq!(committed.keys, news.len() as u64);
    }

    /// A commit that fails keeps its keys (still answered `seen`), says
    /// so, refuses to admit past its bound, and the next commit that can
    /// write takes them all.
    #[test]
    fn a_failing_commit_keeps_its_keys_and_refuses_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let settings = Settings {
            commit_every: Duration::from_millis(5),
            pending_keys: 4,
            ..Settings::default()
        };
        let service = service(&store, settings);
        std::fs::remove_dir_all(&store).unwrap();
        let body: String = (0..20).map(|k| format!("http://k{k}/\n")).collect();
        let first = service.answer(body.as_bytes(), true).unwrap();
        assert_eq!(first.counts[0], 20, "all new");
        let failing = || service.status().failing.is_some();
        while !failing() {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            words(&service.answer(b"http://k3/", false).unwrap()),
            ["seen\thttp://k3/"]
        );
        match service.answer(b"http://other/", true) {
            Err(Refused::Full(why)) => assert!(!why.is_empty()),
            other => panic!("admitted past the bound: {other:?}"),
        }
        // Checking still answers.
        assert!(service.answer(b"http://other/", false).is_ok());
        std::fs::create_dir(&store).unwrap();
        while failing() || service.status().pending_keys > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(service.status().keys, 20);
        assert!(service.status().failed_commits > 0);
        assert_eq!(service.close().unwrap().admitted, 20);
    }

    #[test]
    fn a_closed_service_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let service = service(dir.path(), Settings::default());
        service.answer(b"http://a/", true).unwrap();
        assert_eq!(service.close().unwrap().admitted, 1);
        assert!(matches!(
            service.answer(b"http://b/", true),
            Err(Refused::Stopping)
        ));
        // Closing twice commits nothing more.
        assert_eq!(service.close().unwrap().admitted, 1);
    }
}
