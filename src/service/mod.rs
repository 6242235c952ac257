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

mod body;

pub use body::{BodyError, BodyParts, Encoding};

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::line::NormalizeLines;
use crate::pipeline::chunks::{Chunk, ChunkBytes};
use crate::pipeline::{
    Buffers, Emit, Fate, Fates, Hashes, Mode, Options, Processed, Verdict, process, verdicts,
};
use crate::store::{Access, Committed, Config, Holding, Staging, Store, StoreError};

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
    /// Read every run's every block this often, checking its checksum
    /// (`None`: never), at most `scrub_bytes_per_second`: damage is found
    /// without a request reading it.
    pub scrub_every: Option<Duration>,
    pub scrub_bytes_per_second: u64,
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

impl Answer {
    fn for_body(body: &[u8]) -> Answer {
        Answer {
            body: Vec::with_capacity(body.len() + body.len() / 8 + 16),
            counts: [0; VERDICTS.len()],
        }
    }

    /// Appends `verdict`'s line with `word` for its word, and counts it
    /// by its place in `words`.
    fn push(&mut self, verdict: &Verdict<'_>, word: &'static str, words: &[&str]) {
        verdict.push_line_as(word, &mut self.body);
        if let Some(n) = words.iter().position(|&w| w == word) {
            self.counts[n] += 1;
        }
    }
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

/// Maintenance asked of the committer, and where its answer goes.
enum Job {
    /// Forget these keys (distinct): the answer says which were held.
    Forget(Vec<u128>, mpsc::Sender<Result<Vec<bool>, Refused>>),
    /// Remove the keys admitted longer ago than this, for good.
    Expire(Duration, mpsc::Sender<Result<Committed, Refused>>),
    /// Merge every run into one.
    Compact(mpsc::Sender<Result<Committed, Refused>>),
}

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

/// The fate of each distinct key of a body, as the store and the pending
/// sets decide it (or a forget did).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decision {
    New,
    Held,
    Expired,
    Forgotten,
    Absent,
    /// Decided in an earlier part of the body.
    Repeat,
}

impl Decision {
    /// The fate of a line of this key, its first in the part or not.
    /// `First` stands for forgotten and `Held` for absent in a forget.
    fn fate(self, first: bool) -> Fate {
        match (self, first) {
            (Decision::Held, _) => Fate::Held,
            (Decision::Repeat, _) | (_, false) => Fate::Duplicate,
            (Decision::New | Decision::Forgotten, true) => Fate::First,
            (Decision::Expired, true) => Fate::Expired,
            (Decision::Absent, true) => Fate::Held,
        }
    }

    /// Whether a later part's line of this key is a `dup` of this one (a
    /// held key's is `seen` again, judged afresh).
    fn is_remembered(self) -> bool {
        !matches!(self, Decision::Held | Decision::Repeat)
    }
}

/// What a body asks of its keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asking {
    /// Admit the new ones (`/v1/add`).
    Add,
    /// Admit nothing (`/v1/check`).
    Check,
    /// Forget them (`/v1/forget`).
    Forget,
}

/// What the parts of one body answered so far tell the next
/// ([`Service::answer_part`]): the keys whose first line came in an
/// earlier part and was decided new, expired, forgotten or absent, so that
/// a later line of one is `dup`. 16 bytes and a table slot a key, only for
/// those keys (a body of held keys keeps none).
#[derive(Default)]
pub struct Body {
    decided: PrintSet,
    /// The bytes of the parts answered: where the next starts.
    offset: usize,
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
        let dir = store.dir().to_path_buf();
        let shared = Arc::new(Shared {
            lines,
            options,
            store: RwLock::new(store),
            pending: Mutex::new(Pending::default()),
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

    /// Answers every line of `body` as `dedup --emit verdict` does, in
    /// order; with `admit`, new keys are admitted (else nothing is).
    pub fn answer(&self, body: &[u8], admit: bool) -> Result<Answer, Refused> {
        let asking = match admit {
            true => Asking::Add,
            false => Asking::Check,
        };
        self.answer_part(body, asking, &mut Body::default())
    }

    /// Forgets the key of every line of `body` (made as [`Service::answer`]
    /// makes keys, a line it rejects rejected alike): the next add answers
    /// them `new`. One line for each line of the body, in order:
    /// `forgotten<TAB>key` for a key the store held (or had pending),
    /// `absent<TAB>key` for one it did not, `dup<TAB>key` for a repeat,
    /// and the lines that are no key as [`Service::answer`] has them. Its
    /// counts are of [`FORGET_VERDICTS`].
    pub fn forget(&self, body: &[u8]) -> Result<Answer, Refused> {
        self.answer_part(body, Asking::Forget, &mut Body::default())
    }

    /// Answers `part`, whole lines of a body answered part by part (a body
    /// streamed in), as [`Service::answer`] or [`Service::forget`] answers
    /// a whole body: `body` carries what the parts before decided, so a
    /// repeat of a key first met in an earlier part is `dup` as in one.
    ///
    /// ```
    /// # use urinorm::line::{Columns, NormalizeLines};
    /// # use urinorm::normalize::{Normalizer, Rung};
    /// # use urinorm::line::key::KeyFormat;
    /// # use urinorm::store::{Access, Config, Store};
    /// use urinorm::service::{Asking, Body, Service, Settings};
    /// # let dir = tempfile::tempdir()?;
    /// # let lines = NormalizeLines::new(Normalizer::new(Rung::Syntax), KeyFormat::Canonical, Columns::default());
    /// # let store = Store::open(dir.path(), &Config::new(lines.key_settings()), Access::Write { wait: false })?;
    /// let service = Service::start(store, lines, Settings::default())?;
    /// let mut body = Body::default();
    /// let first = service.answer_part(b"http://a/\n", Asking::Add, &mut body)?;
    /// let second = service.answer_part(b"http://A/\n", Asking::Add, &mut body)?;
    /// assert_eq!((first.body, second.body), (b"new\thttp://a/\n".to_vec(), b"dup\thttp://a/\n".to_vec()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer_part(
        &self,
        part: &[u8],
        asking: Asking,
        body: &mut Body,
    ) -> Result<Answer, Refused> {
        let p = self.shared.keys_of(part, body.offset);
        body.offset += part.len();
        let (firsts, classes) = first_lines(&p.prints);
        let fresh: Vec<u128> = firsts
            .iter()
            .copied()
            .filter(|print| !body.decided.contains(print))
            .collect();
        let mut fresh_decisions = match asking {
            Asking::Forget => {
                let held = self
                    .shared
                    .run_job(|reply| Job::Forget(fresh.clone(), reply))?;
                held.into_iter()
                    .map(|held| match held {
                        true => Decision::Forgotten,
                        false => Decision::Absent,
                    })
                    .collect()
            }
            _ => self.shared.decide(&fresh, asking == Asking::Add)?,
        }
        .into_iter();
        let decisions: Vec<Decision> = firsts
            .iter()
            .map(|print| match body.decided.contains(print) {
                true => Decision::Repeat,
                false => fresh_decisions
                    .next()
                    .expect("a decision for every fresh key"),
            })
            .collect();
        body.decided.extend(
            firsts
                .iter()
                .zip(&decisions)
                .filter(|&(_, d)| d.is_remembered())
                .map(|(&print, _)| print),
        );
        let fates = Fates::default().group(&p.accepted);
        for (i, &(at, first)) in classes.iter().enumerate() {
            fates.set(i, decisions[at as usize].fate(first));
        }
        let mut answer = Answer::for_body(part);
        for verdict in verdicts(&p, |i| fates.get(i)) {
            let word = match (asking, &verdict) {
                (Asking::Forget, Verdict::Decided(Fate::First, _)) => "forgotten",
                (Asking::Forget, Verdict::Decided(Fate::Held, _)) => "absent",
                _ => verdict.word(),
            };
            let words = match asking {
                Asking::Forget => &FORGET_VERDICTS[..],
                _ => &VERDICTS[..],
            };
            answer.push(&verdict, word, words);
        }
        Ok(answer)
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

    /// Every line of `part` made a key, with its fingerprint; `offset` is
    /// where the part starts in its body (only a body's start may hold a
    /// BOM).
    fn keys_of<'b>(&self, part: &'b [u8], offset: usize) -> Processed<'b> {
        let chunk = Chunk {
            source: 0,
            offset,
            bytes: ChunkBytes::Borrowed(part),
            input_bytes: part.len() as u64,
            // A request's lines are each answered, whatever they hold.
            binary: false,
        };
        let hashes = Hashes {
            fingerprints: true,
            ..Hashes::default()
        };
        process(
            chunk,
            Buffers::default(),
            &self.lines,
            hashes,
            &self.options,
        )
    }

    /// Notes the damage `e` says, when it is damage (the first found is
    /// kept and told): the service writes nothing more. Returns `e`.
    fn note_damage(&self, e: StoreError) -> StoreError {
        let mut pending = self.pending();
        self.note_damage_locked(&mut pending, &e);
        e
    }

    /// [`Shared::note_damage`], the pending lock held.
    fn note_damage_locked(&self, pending: &mut Pending, e: &StoreError) {
        if !matches!(e, StoreError::Damaged { .. }) || pending.damaged.is_some() {
            return;
        }
        let why = e.to_string();
        pending.damaged = Some(why.clone());
        self.settled.notify_all();
        if let Some(observer) = &self.observer {
            observer(&Event::Damaged(why));
        }
    }

    /// Reads what the store says of `prints`, noting damage.
    fn holds(&self, prints: &[u128]) -> Result<Vec<Holding>, StoreError> {
        // The store's guard goes before the damage is noted.
        let holdings = self.store().holds(prints);
        holdings.map_err(|e| self.note_damage(e))
    }

    /// Hands `job` (made with the channel its answer comes back on) to the
    /// committer and waits for its answer.
    fn run_job<T>(
        &self,
        job: impl FnOnce(mpsc::Sender<Result<T, Refused>>) -> Job,
    ) -> Result<T, Refused> {
        let (reply, answer) = mpsc::channel();
        {
            let mut pending = self.pending();
            if pending.closed {
                return Err(Refused::Stopping);
            }
            if let Some(why) = &pending.damaged {
                return Err(Refused::Damaged(why.clone()));
            }
            pending.jobs.push_back(job(reply));
            self.wake.notify_all();
        }
        // A committer that ends drops the channel: the service stopped.
        answer.recv().unwrap_or(Err(Refused::Stopping))
    }

    /// Decides each of `firsts` (distinct): held by the store or pending,
    /// expired, or new; with `admit`, admits the new and expired ones.
    fn decide(&self, firsts: &[u128], admit: bool) -> Result<Vec<Decision>, Refused> {
        // The store is read without the pending lock, so requests read it
        // together. A commit that ends meanwhile takes its keys out of the
        // pending sets: then the store is asked again, under the lock,
        // where no commit can end.
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut holdings = self.holds(firsts)?;
        let mut pending = self.room_to_admit(admit)?;
        if self.epoch.load(Ordering::Acquire) != epoch {
            holdings = self.holds(firsts)?;
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
            if let (true, Some(why)) = (admit, &pending.damaged) {
                return Err(Refused::Damaged(why.clone()));
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
    /// keys wait, then does the maintenance asked meanwhile, until closed;
    /// then commits once more. Once the store is found damaged, it commits
    /// nothing more (maintenance is refused).
    fn commit_loop(&self) -> Result<(), StoreError> {
        let mut due = Instant::now() + self.settings.commit_every;
        loop {
            let (closing, renewed, jobs, damaged) = {
                let mut pending = self.wait_until_due(due);
                if Instant::now() >= due {
                    due = Instant::now() + self.settings.commit_every;
                }
                let jobs = std::mem::take(&mut pending.jobs);
                let (closing, damaged) = (pending.closed, pending.damaged.clone());
                let idle = pending.admitted.is_empty() || damaged.is_some();
                if !idle {
                    // Still answered from there until the commit has ended.
                    pending.committing = std::mem::take(&mut pending.admitted);
                }
                let renewed = (!idle).then(|| std::mem::take(&mut pending.renewed));
                (closing, renewed, jobs, damaged)
            };
            let committed = match renewed {
                Some(renewed) => self.commit_pending(renewed),
                None => Ok(()),
            };
            for job in jobs {
                self.do_job(job);
            }
            if closing {
                if let Some(why) = damaged {
                    let lost = self.pending().admitted.len();
                    return Err(StoreError::Io {
                        path: self.dir.clone(),
                        action: "commit to",
                        source: std::io::Error::other(format!(
                            "it was found damaged while serving, and nothing was committed since ({lost} keys admitted were not): {why}"
                        )),
                    });
                }
                return committed;
            }
        }
    }

    /// Commits the keys being committed, then merges: counted, told, and
    /// on failure kept for the next commit.
    fn commit_pending(&self, renewed: u64) -> Result<(), StoreError> {
        let started = Instant::now();
        let committed = self.commit(renewed);
        let keys = self.settle(committed.as_ref().err(), renewed);
        // The merges change no answer: lookups go on while they are
        // written, and wait only while each is put in place.
        let merged = committed.and_then(|()| self.merge());
        let merged = merged.map_err(|e| self.note_damage(e));
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
            observer(&Event::Committed(CommitReport { keys, took, error }));
        }
        merged
    }

    /// Does one job of maintenance and sends its answer.
    fn do_job(&self, job: Job) {
        match job {
            Job::Forget(prints, reply) => {
                drop(reply.send(self.unless_damaged(|| self.forget(&prints))))
            }
            Job::Expire(older_than, reply) => {
                let before = self.store().clock().now().minus(older_than);
                drop(reply.send(self.unless_damaged(|| self.compact(Some(before)))));
            }
            Job::Compact(reply) => drop(reply.send(self.unless_damaged(|| self.compact(None)))),
        }
    }

    /// `work`, unless damage was found since the job was asked.
    fn unless_damaged<T>(
        &self,
        work: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, Refused> {
        let damaged = self.pending().damaged.clone();
        match damaged {
            Some(why) => Err(Refused::Damaged(why)),
            None => work().map_err(|e| self.refused(e)),
        }
    }

    /// A store's error as a refusal, damage noted.
    fn refused(&self, e: StoreError) -> Refused {
        match self.note_damage(e) {
            StoreError::Damaged { .. } => {
                let why = self.pending().damaged.clone().unwrap_or_default();
                Refused::Damaged(why)
            }
            e => Refused::Store(e),
        }
    }

    /// Forgets `prints` (distinct; the committer's, so no commit is under
    /// way): those pending leave the pending set, those the store holds get
    /// a tombstone. Which of them were held. Under the pending lock, so
    /// that no add admits one of them meanwhile (its count would be off).
    fn forget(&self, prints: &[u128]) -> Result<Vec<bool>, StoreError> {
        let mut pending = self.pending();
        let holdings = self.store().holds(prints);
        let holdings = holdings.inspect_err(|e| self.note_damage_locked(&mut pending, e))?;
        let mut tombstones = Vec::new();
        let held = prints
            .iter()
            .zip(&holdings)
            .map(|(&print, &holding)| {
                let was_pending = pending.admitted.remove(&print);
                // A pending key the store holds expired was counted renewed.
                if was_pending && holding == Holding::Expired {
                    pending.renewed = pending.renewed.saturating_sub(1);
                }
                if holding != Holding::Absent {
                    tombstones.push(print);
                }
                was_pending || holding != Holding::Absent
            })
            .collect();
        tombstones.sort_unstable();
        if !tombstones.is_empty() {
            let mut store = self.store_mut();
            store.stage(tombstones.into_iter(), Staging::Forget)?;
            store.publish_unmerged()?;
        }
        // A request that read the store before this must read it again.
        self.epoch.fetch_add(1, Ordering::Release);
        drop(pending);
        self.merge()?;
        Ok(held)
    }

    /// Merges every run into one, without the keys admitted before
    /// `expire_before`: written while lookups read the store, put in place
    /// under its write lock. `forgotten` is the keys removed.
    fn compact(&self, expire_before: Option<crate::store::Stamp>) -> Result<Committed, StoreError> {
        let keys = self.store().keys();
        let written = self.store().write_compaction(expire_before)?;
        if let Some(written) = written {
            self.store_mut().install_merge(written)?;
            self.epoch.fetch_add(1, Ordering::Release);
        }
        let store = self.store();
        Ok(Committed {
            forgotten: keys - store.keys().min(keys),
            keys: store.keys(),
            runs: store.runs(),
            ..Committed::default()
        })
    }

    /// The scrubber: every `every`, reads the whole store (a snapshot of
    /// its own) at the settings' rate, until closed.
    fn scrub_loop(&self, every: Duration) {
        loop {
            {
                let pending = self.pending();
                let (pending, _) = self
                    .scrub_wake
                    .wait_timeout_while(pending, every, |p| !p.closed)
                    .unwrap_or_else(|p| p.into_inner());
                if pending.closed {
                    return;
                }
                if pending.damaged.is_some() {
                    continue;
                }
            }
            let started = Instant::now();
            let mut bytes = 0u64;
            let rate = self.settings.scrub_bytes_per_second.max(1);
            let mut pace = |read: u64| {
                bytes += read;
                let due = Duration::from_secs_f64(bytes as f64 / rate as f64);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait);
                }
                !self.pending().closed
            };
            let scrubbed = Store::open_existing(&self.dir, Access::ReadOnly)
                .and_then(|snapshot| snapshot.scrub(&mut pace));
            match scrubbed {
                Ok(true) => {
                    let mut pending = self.pending();
                    pending.scrubs += 1;
                    pending.last_scrub = Some(SystemTime::now());
                    drop(pending);
                    if let Some(observer) = &self.observer {
                        let took = started.elapsed();
                        observer(&Event::Scrubbed { bytes, took });
                    }
                }
                Ok(false) => return,
                Err(e) => drop(self.note_damage(e)),
            }
        }
    }

    /// The pending keys once a commit is due: `due` has come, enough keys
    /// wait, maintenance waits, or the service is closing.
    fn wait_until_due(&self, due: Instant) -> MutexGuard<'_, Pending> {
        let mut pending = self.pending();
        loop {
            let now = Instant::now();
            let ready = pending.closed
                || now >= due
                || !pending.jobs.is_empty()
                || (pending.damaged.is_none()
                    && pending.admitted.len() >= self.settings.pending_keys);
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
        let mut store = self.store_mut();
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
            self.store_mut().install_merge(written)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line::Columns;
    use crate::line::key::KeyFormat;
    use crate::normalize::{Normalizer, Rung};
    use crate::store::Access;

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
