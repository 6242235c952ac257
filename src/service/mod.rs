//! The seen service's core (`urinorm serve`): one seen store shared by
//! many clients, each request a body of lines answered line by line as
//! `dedup --emit verdict` answers them, keys admitted in memory and
//! committed by one thread for every client together.
//!
//! It knows bodies, verdicts and the store; nothing of HTTP, sockets or
//! threads beyond its committer and its scrubber. Every key answered `new`
//! (or `expired`) is at every instant in the store or in one of two pending
//! sets (admitted, or being committed), so across all requests each key is
//! `new` once.
//!
//! The committer is the store's one writer: commits, merges, and the
//! maintenance asked while serving (forget, expire, compact) are its jobs,
//! one after another, each written while lookups read the store and put in
//! place under its write lock. A read or a scrub that finds the store
//! damaged marks the service damaged: from then on nothing more is
//! admitted or written beside the damage, until the store is salvaged.
//!
//! ```
//! use urinorm::line::{Columns, NormalizeLines};
//! use urinorm::normalize::{Normalizer, Rung};
//! use urinorm::line::key::KeyFormat;
//! use urinorm::store::{Access, Config, Store};
//! use urinorm::service::{Service, Settings};
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
//!
//! `answer` makes a body's keys and answers its lines; `decide` gives each
//! key its fate against the store and the pending sets (one `new` a key
//! across requests); `committer` is the store's one writer and its jobs;
//! `damage` keeps what damage was found; `scrub` reads the store through.

mod answer;
mod body;
mod budget;
mod committer;
mod damage;
mod decide;
mod scrub;
#[cfg(test)]
mod tests;

pub use answer::{Asking, Body};
pub use body::{BodyError, BodyParts, Encoding};
pub use budget::SiteBudget;

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crate::line::NormalizeLines;
use crate::pipeline::{Emit, Mode, Options};
use crate::store::{Committed, Config, Store, StoreError};
use committer::Job;

/// The words of the verdicts a service gives, in the order of
/// [`Answer::counts`].
pub const VERDICTS: [&str; 8] = [
    "new", "dup", "seen", "expired", "rejected", "blank", "filtered", "capped",
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
    /// Read every run's every block this often, checking its checksum
    /// (`None`: never), at most `scrub_bytes_per_second`: damage is found
    /// without a request reading it.
    pub scrub_every: Option<Duration>,
    pub scrub_bytes_per_second: u64,
    /// At most so many keys of each site in the store, across clients and
    /// restarts; a new key past it is answered `capped`, not admitted.
    pub budget: Option<crate::pipeline::Budget>,
    /// Keep the store's clock at its time (a replay, a test) rather than
    /// follow the system's from commit to commit.
    pub fixed_time: bool,
}

/// The default time between scrubs: a day.
pub const SCRUB_EVERY: Duration = Duration::from_secs(86_400);

/// The default rate a scrub reads at: a store of 10^9 keys (about 23 GB)
/// in about 12 minutes, a small share of a disk's bandwidth.
pub const SCRUB_BYTES_PER_SECOND: u64 = 32 << 20;

/// Keys waiting before a commit comes early: a set of about 34 MiB.
pub const PENDING_KEYS: usize = 1 << 20;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            commit_every: Duration::from_secs(1),
            pending_keys: PENDING_KEYS,
            max_line_bytes: crate::pipeline::MAX_LINE_BYTES,
            scrub_every: Some(SCRUB_EVERY),
            scrub_bytes_per_second: SCRUB_BYTES_PER_SECOND,
            budget: None,
            fixed_time: false,
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

/// The words of the verdicts [`Service::forget`] gives, in the order of
/// its [`Answer::counts`].
pub const FORGET_VERDICTS: [&str; 6] = [
    "forgotten",
    "absent",
    "dup",
    "rejected",
    "blank",
    "filtered",
];

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
    /// The store was found damaged (this sentence says where): nothing
    /// more is written to it until it is salvaged.
    Damaged(String),
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
            Refused::Damaged(why) => write!(
                f,
                "nothing more is written to the store until it is salvaged (stop the service, salvage, start it again): {why}"
            ),
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

/// What the service tells whoever watches it ([`Service::start_watched`]).
#[derive(Clone, Debug)]
pub enum Event {
    /// A commit ended.
    Committed(CommitReport),
    /// The store was found damaged, as the sentence says: from now on
    /// nothing more is admitted or written.
    Damaged(String),
    /// A scrub read every block of the store: `bytes` in `took`.
    Scrubbed { bytes: u64, took: Duration },
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
    /// The damage found, once found.
    pub damaged: Option<String>,
    /// Scrubs that read the whole store, and when the last one ended.
    pub scrubs: u64,
    pub last_scrub: Option<SystemTime>,
}

type PrintSet = HashSet<u128, ahash::RandomState>;

/// Told of every [`Event`] ([`Service::start_watched`]).
pub type Observer = Box<dyn Fn(&Event) + Send + Sync>;

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
    /// The damage found (the sentence), once found: nothing more is
    /// admitted or committed.
    damaged: Option<String>,
    /// Maintenance waiting for the committer, in order.
    jobs: VecDeque<Job>,
    /// Under a budget, what it has spent.
    budget: Option<budget::SiteBudget>,
    scrubs: u64,
    last_scrub: Option<SystemTime>,
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
    /// Raised for the scrubber: closing.
    scrub_wake: Condvar,
    dir: PathBuf,
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
    scrubber: Mutex<Option<JoinHandle<()>>>,
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
        mut lines: NormalizeLines,
        settings: Settings,
        observer: Option<Observer>,
    ) -> Result<Service, StoreError> {
        // Asked a few keys at a time: the filters spare most block reads.
        store.keep_filters()?;
        let budget = match settings.budget {
            Some(budget) => {
                lines.site = Some(budget.site);
                Some(budget::SiteBudget::start(budget, &mut store)?)
            }
            None => None,
        };
        let options = Options {
            mode: Mode::Dedup(Emit::Verdict),
            max_line_bytes: settings.max_line_bytes,
            ..Options::default()
        };
        let dir = store.dir().to_path_buf();
        let shared = Arc::new(Shared {
            lines,
            options,
            store: RwLock::new(store),
            pending: Mutex::new(Pending {
                budget,
                ..Pending::default()
            }),
            wake: Condvar::new(),
            settled: Condvar::new(),
            scrub_wake: Condvar::new(),
            dir,
            epoch: AtomicU64::new(0),
            settings,
            commits: AtomicU64::new(0),
            failed_commits: AtomicU64::new(0),
            observer,
        });
        let thread = |name: &str| std::thread::Builder::new().name(name.into());
        let started = |source| StoreError::Io {
            path: shared.dir.clone(),
            action: "start the threads that serve",
            source,
        };
        let committer = {
            let shared = Arc::clone(&shared);
            thread("urinorm-commit").spawn(move || shared.commit_loop())
        }
        .map_err(started)?;
        let scrubber = match shared.settings.scrub_every {
            Some(every) => {
                let shared = Arc::clone(&shared);
                Some(thread("urinorm-scrub").spawn(move || shared.scrub_loop(every)))
            }
            None => None,
        };
        let service = Service {
            shared: Arc::clone(&shared),
            committer: Mutex::new(Some(committer)),
            scrubber: Mutex::new(None),
        };
        *service.scrubber.lock().unwrap_or_else(|p| p.into_inner()) =
            scrubber.transpose().map_err(started)?;
        Ok(service)
    }

    /// Removes for good the keys admitted longer ago than `older_than` by
    /// the store's clock (as `seen expire` does), while lookups go on.
    /// `forgotten` is the keys removed.
    pub fn expire(&self, older_than: Duration) -> Result<Committed, Refused> {
        self.shared.run_job(|reply| Job::Expire(older_than, reply))
    }

    /// Merges every run into one (as `seen compact` does), while lookups go
    /// on.
    pub fn compact(&self) -> Result<Committed, Refused> {
        self.shared.run_job(Job::Compact)
    }

    /// The store's state and the service's.
    pub fn status(&self) -> Status {
        let shared = &self.shared;
        let (pending_keys, failing, damaged, scrubs, last_scrub) = {
            let pending = shared.pending();
            let keys = pending.admitted.len() + pending.committing.len();
            let damaged = pending.damaged.clone();
            (
                keys,
                pending.failing.clone(),
                damaged,
                pending.scrubs,
                pending.last_scrub,
            )
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
            damaged,
            scrubs,
            last_scrub,
        }
    }

    /// Notes in the store's writer lock that it is served at `url`, for
    /// the message a command that would write it gets.
    pub fn note_serving(&self, url: &str) -> Result<(), StoreError> {
        self.shared.store().note_serving(url)
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
            self.shared.scrub_wake.notify_all();
        }
        let scrubber = self
            .scrubber
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(scrubber) = scrubber {
            let _ = scrubber.join();
        }
        let committer = self
            .committer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        match committer {
            Some(committer) => committer.join().unwrap_or_else(|_| {
                Err(StoreError::Io {
                    path: self.shared.dir.clone(),
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

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn store(&self) -> RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|p| p.into_inner())
    }

    fn store_mut(&self) -> std::sync::RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|p| p.into_inner())
    }
}
