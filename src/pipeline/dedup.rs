//! The dedup stage: for every accepted line of a batch, whether it is the
//! first of its class, a duplicate, held by a seen store consulted batch by
//! batch, past its site's cap ([`caps`](super::caps)), or (once the set has
//! reached its memory limit) a line for the [`spill`](super::spill) to
//! decide. It runs on the
//! producer's side of the pipeline, a batch at a time, shards in parallel;
//! at the end it hands the writer the classes it still owes: the counted
//! classes of `--emit count`, then the spill's survivors; or, sorting, every
//! class in byte order of its keys (sorted in parallel, merged with the
//! spill's sorted survivors).
//!
//! It knows keys, hashes and fates; not how a line was mapped, nor how the
//! output is written.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use std::collections::HashSet;

use super::caps::{Caps, NO_SITE};
use super::chunks::ChunkBytes;
use super::hash::key_hasher;
use super::place::Place;
use super::plan::Plan;
use super::set::{DedupSet, Key, SHARDS, prefetch, prefetch_bytes, shard_of};
use super::spill::{DEDUP_MEMORY_PER_BYTE, Order, Spill, SpillError, SpillStats, Survivor};
use super::store_join::{Classes, Live};
use super::worker::{Accepted, Processed, Span};
use super::writer::ClassLine;
use super::{Emit, Mode, Options, RunError};
use crate::store::{Asked, Holding, StoreError};

/// What the dedup stage made of an accepted line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Fate {
    /// Its class was seen before.
    Duplicate,
    /// The first line of its class.
    First,
    /// Not in the set, which is full: it went to the spill, which decides.
    Spilled,
    /// Its class is held by a seen store consulted batch by batch.
    Seen,
    /// The first line of a class past its site's cap: not written.
    Capped,
    /// The first line of a class a seen store consulted batch by batch
    /// holds, admitted longer ago than the maximum age: written as a first
    /// line is, and admitted again.
    Expired,
}

impl Fate {
    fn from_u8(n: u8) -> Fate {
        match n {
            0 => Fate::Duplicate,
            1 => Fate::First,
            2 => Fate::Spilled,
            3 => Fate::Seen,
            4 => Fate::Capped,
            _ => Fate::Expired,
        }
    }

    /// Whether the line is written as its class's first (new or expired).
    pub(crate) fn is_first(self) -> bool {
        matches!(self, Fate::First | Fate::Expired)
    }
}

/// One chunk's accepted lines grouped by shard, and the fate of each.
#[derive(Default)]
pub(crate) struct Fates {
    /// What the dedup loop needs of each accepted line, grouped by shard, in
    /// input order within each shard; shard `s` has
    /// `lookups[shard_starts[s]..shard_starts[s + 1]]`. Copied out of the
    /// accepted lines while the chunk is in the cache, so that each shard's
    /// loop reads its lines in sequence rather than across the chunk.
    lookups: Vec<Lookup>,
    shard_starts: Vec<u32>,
    /// Each accepted line's [`Fate`] (as its `u8`), set by one shard's task.
    fate: Vec<AtomicU8>,
}

/// An accepted line as its shard looks it up: 24 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Lookup {
    hash: u64,
    /// The key's bytes: in the chunk's arena with [`IN_ARENA`] set in
    /// `line`, else in the chunk itself.
    key: Span,
    /// The line's index among the chunk's accepted lines, and [`IN_ARENA`].
    line: u32,
}

/// Set in [`Lookup::line`] when the key lies in the chunk's arena.
const IN_ARENA: u32 = 1 << 31;

impl Lookup {
    fn of(i: usize, accepted: &Accepted) -> Lookup {
        let (key, in_arena) = match accepted.key {
            Some(span) => (span, IN_ARENA),
            None => (accepted.line, 0),
        };
        Lookup {
            hash: accepted.hash,
            key,
            line: i as u32 | in_arena,
        }
    }

    /// The index of the line among the chunk's accepted lines.
    fn index(&self) -> usize {
        (self.line & !IN_ARENA) as usize
    }

    /// The key's bytes, in `p` (the line's chunk).
    fn bytes<'p>(&self, p: &'p Processed<'_>) -> &'p [u8] {
        match self.line & IN_ARENA {
            0 => self.key.of(&p.chunk.bytes),
            _ => self.key.of(&p.arena),
        }
    }

    /// The key, and where it lies for the whole run when it is the line
    /// itself in a mapped input (so it need not be copied).
    fn key<'p>(&self, p: &'p Processed<'_>) -> Key<'p> {
        let in_input = match p.chunk.bytes {
            ChunkBytes::Borrowed(_) if self.line & IN_ARENA == 0 => {
                Place::in_input(p.chunk.source, p.chunk.offset + self.key.start as usize).ok()
            }
            _ => None,
        };
        Key {
            bytes: self.bytes(p),
            in_input,
        }
    }
}

impl Fates {
    /// Groups `accepted` by shard (a counting sort, input order kept in
    /// each), reusing these vectors; every fate starts as a duplicate.
    /// Accepted lines are fewer than 2^31 (a chunk holds under 4 GiB).
    pub(crate) fn group(mut self, accepted: &[Accepted]) -> Fates {
        let (lookups, starts) = (&mut self.lookups, &mut self.shard_starts);
        lookups.clear();
        starts.clear();
        starts.resize(SHARDS + 1, 0);
        for a in accepted {
            starts[shard_of(a.hash) + 1] += 1;
        }
        for s in 0..SHARDS {
            starts[s + 1] += starts[s];
        }
        let mut next = [0u32; SHARDS];
        next.copy_from_slice(&starts[..SHARDS]);
        lookups.resize(accepted.len(), Lookup::default());
        for (i, a) in accepted.iter().enumerate() {
            let slot = &mut next[shard_of(a.hash)];
            lookups[*slot as usize] = Lookup::of(i, a);
            *slot += 1;
        }
        self.fate.clear();
        self.fate.extend(
            accepted
                .iter()
                .map(|_| AtomicU8::new(Fate::Duplicate as u8)),
        );
        self
    }

    /// The fate of accepted line `i`.
    pub(crate) fn get(&self, i: usize) -> Fate {
        Fate::from_u8(self.fate[i].load(Ordering::Relaxed))
    }

    pub(crate) fn set(&self, i: usize, fate: Fate) {
        self.fate[i].store(fate as u8, Ordering::Relaxed);
    }

    /// Shard `s`'s lines.
    fn of_shard(&self, s: usize) -> &[Lookup] {
        &self.lookups[self.shard_starts[s] as usize..self.shard_starts[s + 1] as usize]
    }
}

/// One processed chunk of a batch with its fates.
pub(crate) type ChunkFates<'a> = (Processed<'a>, Fates);

/// The stage: the set of keys, and the spill once the set is full.
pub(crate) struct Dedup {
    set: DedupSet,
    emit: Emit,
    /// Whether the set keeps its classes in order with their sizes: for
    /// `--emit count`, for a seen store, which needs each class once, and
    /// for sorting, which writes them all at the end.
    counting: bool,
    /// Sorting ([`Options::sort`]): what to write of each class, when it
    /// is not its key.
    outputs: Option<Outputs>,
    /// When counting: the shard of each class, in first-seen order, with
    /// [`LEFT_OUT`] set when the class is not written (held or capped).
    order: Vec<u16>,
    /// The new classes of the batch being decided: chunk and line of each
    /// first line, in input order.
    news: Vec<(u32, u32)>,
    /// Per-site caps, when asked for.
    caps: Option<Caps>,
    /// Whether the classes are written in byte order of their keys.
    sort: bool,
    memory_limit: Option<u64>,
    temp_dir: PathBuf,
    /// The inputs' total size, when every input is a file.
    total_bytes: Option<u64>,
    /// Bytes of the batches decided so far.
    bytes_in: u64,
    reserved: bool,
    /// Whether the set has reached the memory limit: it takes no new key.
    full: bool,
    spill: Option<Spill>,
    /// Against a seen store consulted batch by batch: the fingerprints of
    /// the classes it holds that this run has met.
    held: HashSet<u128, ahash::RandomState>,
    /// In a live run that commits as it goes, the memory for the classes
    /// it decided (its set, and the prints the store held) past which it
    /// commits and forgets them ([`Dedup::forget_committed`]).
    forgets_past: Option<usize>,
}

/// A live run's memory for the classes it decided, unless the memory limit
/// is lower: a coprocess running for weeks keeps this, what it has not
/// committed, and the store's filters.
const LIVE_SET_BYTES: u64 = 32 << 20;

/// How the stage's work went, for the stats.
#[derive(Default)]
pub(crate) struct Finished {
    /// Classes written at the end (the spill's survivors).
    pub(crate) survivors: u64,
    /// The spill's survivors past their site's cap, not written.
    pub(crate) capped: u64,
    pub(crate) spill: Option<SpillStats>,
}

impl Dedup {
    /// The stage for a run planned as `plan`.
    pub(crate) fn new(plan: &Plan, options: &Options, total_bytes: Option<u64>) -> Dedup {
        let emit = match plan.mode {
            Mode::Dedup(emit) => emit,
            Mode::Map => unreachable!("a mapping run has no dedup stage"),
        };
        let counting = plan.counting;
        let mut dedup = Dedup {
            set: DedupSet::new(counting),
            emit,
            counting,
            outputs: plan.keeps_outputs.then(Outputs::default),
            order: Vec::new(),
            news: Vec::new(),
            caps: options.per_site_cap.map(Caps::new),
            sort: options.sort,
            memory_limit: options.memory_limit.filter(|_| plan.spills),
            temp_dir: options.temp_dir.clone(),
            total_bytes,
            bytes_in: 0,
            reserved: false,
            full: false,
            spill: None,
            held: HashSet::with_hasher(key_hasher()),
            forgets_past: plan.forgets.then(|| {
                options
                    .memory_limit
                    .map_or(LIVE_SET_BYTES, |l| l.min(LIVE_SET_BYTES)) as usize
            }),
        };
        // A limit below an empty set's tables spills every line.
        dedup.full = dedup.over_limit();
        dedup
    }

    fn over_limit(&self) -> bool {
        let outputs = self.outputs.as_ref().map_or(0, Outputs::memory_bytes);
        self.memory_limit
            .is_some_and(|limit| (self.set.memory_bytes() + outputs) as u64 > limit)
    }

    /// Decides the fate of every accepted line of `batch`, in input order:
    /// first of its class or duplicate; held, when `live` (a seen store
    /// consulted batch by batch) holds its class; capped, past its site's
    /// cap (classes the store holds use none of it); spilled, when a full
    /// set cannot take it.
    pub(crate) fn decide(
        &mut self,
        pool: &rayon::ThreadPool,
        batch: &[ChunkFates<'_>],
        maps: &[&[u8]],
        live: Option<&Live<'_>>,
    ) -> Result<(), RunError> {
        // A set that forgets is not sized for the whole input.
        if !self.reserved && !self.full && self.forgets_past.is_none() {
            // Written empty on every thread: one thread alone took 5 % of
            // a run of 14M lines doing it.
            let lines = self.expected_lines(batch);
            pool.install(|| self.set.reserve(lines));
            self.reserved = true;
        }
        let full = self.full;
        pool.install(|| dedup_batch(&mut self.set, batch, maps, full));
        self.full = self.over_limit();
        self.bytes_in += batch
            .iter()
            .map(|(p, _)| p.chunk.bytes.len() as u64)
            .sum::<u64>();
        let mut news = std::mem::take(&mut self.news);
        news.clear();
        if self.counting || live.is_some() || self.caps.is_some() {
            news.extend(batch.iter().enumerate().flat_map(|(c, (p, fates))| {
                (0..p.accepted.len())
                    .filter(|&i| fates.get(i) == Fate::First)
                    .map(move |i| (c as u32, i as u32))
            }));
        }
        // Where this batch's classes start in `order`.
        let base = self.order.len();
        if self.counting {
            let shard = |&(c, i): &(u32, u32)| {
                shard_of(batch[c as usize].0.accepted[i as usize].hash) as u16
            };
            self.order.extend(news.iter().map(shard));
        }
        if let Some(outputs) = &mut self.outputs {
            for &(c, i) in &news {
                let p = &batch[c as usize].0;
                outputs.push(output_of(self.emit, p, &p.accepted[i as usize]));
            }
        }
        if let Some(live) = live {
            self.mark_held(pool, batch, &news, base, live)
                .map_err(RunError::Seen)?;
        }
        if self.caps.is_some() {
            self.cap(batch, &news, base);
        }
        if let Some(live) = live {
            self.spend_budget(batch, &news, base, live);
        }
        self.news = news;
        if full {
            self.spill_batch(batch).map_err(RunError::Spill)?;
        }
        Ok(())
    }

    /// Whether, in a run that may forget, its set has grown past what it
    /// may keep: the caller commits every class written so far, then calls
    /// [`Dedup::forget_committed`].
    pub(crate) fn wants_forgetting(&self) -> bool {
        let held = self.held.capacity() * size_of::<u128>();
        self.forgets_past
            .is_some_and(|most| self.set.memory_bytes() + held > most)
    }

    /// Forgets every class decided so far, each now in the store (or capped,
    /// and capped again if it comes back): a repeat of one is answered by
    /// the store, as held, rather than as a duplicate.
    pub(crate) fn forget_committed(&mut self) {
        debug_assert!(self.forgets_past.is_some());
        self.set.clear();
        self.held.clear();
    }

    /// Marks [`Fate::Seen`] each new class of `batch` (`news`, whose class
    /// numbers start at `base`) the store holds, looked up together,
    /// sorted; and every later line of a class held.
    fn mark_held(
        &mut self,
        pool: &rayon::ThreadPool,
        batch: &[ChunkFates<'_>],
        news: &[(u32, u32)],
        base: usize,
        live: &Live<'_>,
    ) -> Result<(), StoreError> {
        let mut asked: Vec<Asked> = news
            .iter()
            .enumerate()
            .map(|(at, &(c, i))| Asked {
                print: batch[c as usize].0.prints[i as usize],
                at,
                holding: Holding::Absent,
            })
            .collect();
        asked.sort_unstable_by_key(|a| a.print);
        live.lookup(pool, &mut asked)?;
        for a in asked.iter().filter(|a| a.holding != Holding::Absent) {
            let (c, i) = news[a.at];
            if a.holding == Holding::Expired {
                batch[c as usize].1.set(i as usize, Fate::Expired);
                continue;
            }
            batch[c as usize].1.set(i as usize, Fate::Seen);
            leave_out(&mut self.order, base + a.at);
            self.held.insert(a.print);
        }
        if !self.held.is_empty() {
            for (p, fates) in batch {
                for i in (0..p.accepted.len()).filter(|&i| fates.get(i) == Fate::Duplicate) {
                    if self.held.contains(&p.prints[i]) {
                        fates.set(i, Fate::Seen);
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks [`Fate::Capped`] each new class of `batch` (`news`, numbered
    /// from `base`) past its site's cap, in input order.
    fn cap(&mut self, batch: &[ChunkFates<'_>], news: &[(u32, u32)], base: usize) {
        let caps = self.caps.as_mut().expect("caps asked for");
        for (k, &(c, i)) in news.iter().enumerate() {
            let (p, fates) = &batch[c as usize];
            if !fates.get(i as usize).is_first() {
                continue; // held: it uses none of the budget
            }
            if !caps.admit(p.accepted[i as usize].site) {
                fates.set(i as usize, Fate::Capped);
                leave_out(&mut self.order, base + k);
            }
        }
    }

    /// Marks [`Fate::Capped`] each new class of `batch` (`news`, numbered
    /// from `base`) past its site's budget in the store, in input order
    /// (classes the store holds, or a cap held back, spend none).
    fn spend_budget(
        &mut self,
        batch: &[ChunkFates<'_>],
        news: &[(u32, u32)],
        base: usize,
        live: &Live<'_>,
    ) {
        live.with_budget(|spending, numbers| {
            for (k, &(c, i)) in news.iter().enumerate() {
                let (p, fates) = &batch[c as usize];
                if !fates.get(i as usize).is_first() {
                    continue;
                }
                if !spending.spend(p.accepted[i as usize].site, numbers) {
                    fates.set(i as usize, Fate::Capped);
                    leave_out(&mut self.order, base + k);
                }
            }
        });
    }

    /// Writes the spilled lines of `batch` to the spill (made on the first
    /// one), with what to write if each is the first of its class.
    fn spill_batch(&mut self, batch: &[ChunkFates<'_>]) -> Result<(), SpillError> {
        for (p, fates) in batch {
            for (i, a) in p.accepted.iter().enumerate() {
                if fates.get(i) != Fate::Spilled {
                    continue;
                }
                let output = output_of(self.emit, p, a);
                let pushed = self.spill()?.push(a.hash, p.key(a), output, a.site);
                pushed.map_err(|e| with_estimate(e, self.total_bytes, self.bytes_in))?;
            }
        }
        Ok(())
    }

    /// The spill, made when the first line needs it.
    fn spill(&mut self) -> Result<&mut Spill, SpillError> {
        if self.spill.is_none() {
            let rest = self
                .total_bytes
                .map_or(0, |t| t.saturating_sub(self.bytes_in));
            let spill = Spill::create(
                &self.temp_dir,
                rest,
                self.spill_limit(),
                DEDUP_MEMORY_PER_BYTE,
            )
            .map_err(|error| SpillError::creating(&self.temp_dir, error))?;
            self.spill = Some(spill);
        }
        Ok(self.spill.as_mut().expect("made above"))
    }

    /// The memory a spill's partitions are sized and deduplicated within: the
    /// limit, but never below [`MIN_SPILL_MEMORY`]. Splitting partitions that
    /// small would cost a file per few lines (and file creation is slow on many
    /// disks) to save memory no one is short of.
    fn spill_limit(&self) -> u64 {
        self.memory_limit.unwrap_or(u64::MAX).max(MIN_SPILL_MEMORY)
    }

    /// The number of lines the whole input likely has, from the first batch,
    /// capped: room for that many keys is reserved up front so the dedup tables
    /// never grow by copying. Standard input has no known size: nothing then.
    fn expected_lines(&self, first_batch: &[ChunkFates<'_>]) -> usize {
        // Never more than a quarter of the memory limit in reserved slots (of
        // about 26 bytes a key at most 5/8 full).
        let cap = self
            .memory_limit
            .map_or(1 << 26, |limit| (limit / 4 / 26).min(1 << 26) as usize);
        let (lines, bytes) = first_batch.iter().fold((0, 0), |(l, b), (p, _)| {
            (l + p.lines as usize, b + p.chunk.bytes.len())
        });
        match self.total_bytes {
            // Most inputs repeat some lines: room for three in four to be
            // distinct; a shard that needs more grows.
            Some(total) if bytes > 0 => {
                ((total as usize / bytes).saturating_mul(lines)).min(cap) / 4 * 3
            }
            _ => 0,
        }
    }

    /// The classes the writer still owes, in input order: for `--emit
    /// count`, every class of the set with its size; then the spilled
    /// classes, deduplicated partition by partition (they come after, their
    /// first lines being later). Sorting, every class, in byte order of the
    /// keys, their lines made by `class_line` on the pool. `write` gets
    /// each class's output and size, or many classes' lines. With
    /// `classes` (a bulk join's, empty so far), the set's classes are taken
    /// into it ([`Classes::take_set`]), then the spill's survivors.
    pub(crate) fn finish<E>(
        mut self,
        pool: &rayon::ThreadPool,
        maps: &[&[u8]],
        mut classes: Option<&mut Classes>,
        class_line: ClassLine,
        mut write: impl FnMut(Owed<'_>) -> Result<(), E>,
        mut capped_class: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<Finished, FinishError<E>> {
        let spill_limit = self.spill_limit();
        let sorting = self.sort;
        let mut spill = self.spill.take();
        if sorting {
            debug_assert!(
                classes.is_none(),
                "a sorting run consults a store batch by batch"
            );
            self.write_sorted(pool, maps, spill.as_mut(), class_line, &mut write)?;
        }
        let mut write_class = |output: &[u8], size| write(Owed::Class(output, size));
        if !sorting && self.emit == Emit::Count {
            let classes = self.set.classes_in_order(&self.order, maps);
            for ((key, count), _) in classes.zip(&self.order).filter(|(_, o)| *o & LEFT_OUT == 0) {
                write_class(key, count).map_err(FinishError::Write)?;
            }
        }
        if let Some(classes) = classes.as_deref_mut() {
            debug_assert!(self.counting, "only a counting set keeps its classes");
            classes.take_set(pool, &mut self.set, &self.order, maps);
        }
        let Dedup {
            set,
            outputs,
            total_bytes,
            bytes_in,
            mut caps,
            ..
        } = self;
        // The spill's partitions use the memory the set held.
        drop((set, outputs));
        let Some(spill) = spill else {
            return Ok(Finished::default());
        };
        let (mut survivors, mut capped) = (0u64, 0u64);
        let mut write_error = None;
        let order = match sorting {
            true => Order::Key,
            false => Order::Input,
        };
        let finished = spill.finish(pool, spill_limit, order, |survivor| {
            // The set's classes, added to a sorted spill, are not survivors.
            if sorting && survivor.tag == SET_CLASS {
                return write_class(survivor.output, survivor.size).map_err(|e| {
                    write_error = Some(e);
                    std::io::Error::other("the output could not be written")
                });
            }
            // The spilled classes come after the set's, in input order: the
            // caps go on counting.
            if let Some(caps) = &mut caps
                && !caps.admit(survivor.tag)
            {
                capped += 1;
                return capped_class(survivor.output).map_err(|e| {
                    write_error = Some(e);
                    std::io::Error::other("the capped lines could not be written")
                });
            }
            survivors += 1;
            if let Some(classes) = classes.as_deref_mut() {
                classes.push(survivor.key, survivor.size);
            }
            write_class(survivor.output, survivor.size).map_err(|e| {
                write_error = Some(e);
                std::io::Error::other("the output could not be written")
            })
        });
        if let Some(e) = write_error {
            return Err(FinishError::Write(e));
        }
        let spilled =
            finished.map_err(|e| FinishError::Spill(with_estimate(e, total_bytes, bytes_in)))?;
        Ok(Finished {
            survivors,
            capped,
            spill: Some(spilled),
        })
    }

    /// Sorting: the set's written classes in byte order of their keys, to
    /// `write` (their lines made on the pool, piece by piece), or, when
    /// the run spilled, to the spill as one more run, to be merged with
    /// its survivors.
    fn write_sorted<E>(
        &self,
        pool: &rayon::ThreadPool,
        maps: &[&[u8]],
        spill: Option<&mut Spill>,
        class_line: ClassLine,
        write: &mut impl FnMut(Owed<'_>) -> Result<(), E>,
    ) -> Result<(), FinishError<E>> {
        let (classes, sorted) = self.sorted_classes(pool, maps);
        let survivor = |sorted: &[u32], i| self.survivor(&classes, sorted, i);
        if let Some(spill) = spill {
            let survivors = (0..sorted.len()).map(|i| survivor(&sorted, i));
            return spill.add_run(survivors).map_err(FinishError::Spill);
        }
        // The keys lie anywhere and each line is made from its key: the
        // lines are made on every thread, then written in order.
        let mut pieces = vec![Vec::new(); 4 * pool.current_num_threads()];
        for window in sorted.chunks(SORTED_PIECE * pieces.len()) {
            pool.install(|| {
                let in_window = pieces.par_iter_mut().zip(window.par_chunks(SORTED_PIECE));
                in_window.for_each(|(lines, piece)| {
                    lines.clear();
                    for i in 0..piece.len() {
                        let class = survivor(piece, i);
                        class_line.push(class.output, class.size, lines);
                    }
                });
            });
            for (lines, piece) in pieces.iter().zip(window.chunks(SORTED_PIECE)) {
                write(Owed::Lines(lines, piece.len() as u64)).map_err(FinishError::Write)?;
            }
        }
        Ok(())
    }

    /// The class `sorted[i]` of `classes`, the classes some places on
    /// asked for early: they and their keys lie anywhere, so the class far
    /// ahead is fetched, and the key of the one nearer (which the class
    /// points to).
    fn survivor<'c>(
        &'c self,
        classes: &[(&'c [u8], u64)],
        sorted: &[u32],
        i: usize,
    ) -> Survivor<'c> {
        if let Some(&far) = sorted.get(i + 8 * PREFETCH_AHEAD) {
            prefetch(&classes[far as usize] as *const (&[u8], u64) as *const u8);
        }
        if let Some(&near) = sorted.get(i + 4 * PREFETCH_AHEAD) {
            prefetch(classes[near as usize].0.as_ptr());
        }
        let n = sorted[i] as usize;
        let (key, size) = classes[n];
        Survivor {
            key,
            output: self.outputs.as_ref().and_then(|o| o.get(n)).unwrap_or(key),
            size,
            tag: SET_CLASS,
        }
    }

    /// Sorting: the set's classes (key and size, in first-seen order),
    /// and the numbers of those written (not held, not capped) in byte
    /// order of their keys; gathered and sorted on the pool.
    fn sorted_classes<'s>(
        &'s self,
        pool: &rayon::ThreadPool,
        maps: &'s [&'s [u8]],
    ) -> (Vec<(&'s [u8], u64)>, Vec<u32>) {
        pool.install(|| {
            let classes = self.set.classes_gathered(&self.order, maps);
            let written = |n: u32| self.order[n as usize] & LEFT_OUT == 0;
            let sorted = super::sort::sorted(&classes, |c| c.0, written);
            (classes, sorted)
        })
    }
}

/// What the end of a run owes the writer: one class (its output and
/// size), or the lines of many, made by a [`ClassLine`], and how many.
pub(crate) enum Owed<'a> {
    Class(&'a [u8], u64),
    Lines(&'a [u8], u64),
}

/// Sorted classes whose lines one thread makes at a time: a few MB.
const SORTED_PIECE: usize = 1 << 16;

/// The tag of the set's classes in a sorted spill. A sorted run spills
/// only without caps, so every spilled line's tag is then [`NO_SITE`].
const SET_CLASS: u32 = NO_SITE - 1;

/// What is written for the first line of a class, when it is not its key:
/// the mapper's output (`--emit canonical`), or the line itself (`first`).
fn output_of<'p>(emit: Emit, p: &'p Processed<'_>, a: &Accepted) -> Option<&'p [u8]> {
    match emit {
        Emit::Canonical => a.output.map(|span| span.of(&p.arena)),
        // The line itself, unless it is the key.
        Emit::First => a.key.map(|_| p.line(a.line)),
        Emit::Count | Emit::Nothing | Emit::Verdict => None,
    }
}

/// Sorting: what to write for each class, in first-seen order, when it is
/// not the class's key. Nothing is kept per class while every output is
/// its key (the usual `--emit canonical`).
#[derive(Default)]
struct Outputs {
    bytes: Vec<u8>,
    /// Where each class's output ends in `bytes` (an empty one is the key);
    /// empty while no output differed.
    ends: Vec<u64>,
    classes: usize,
}

impl Outputs {
    fn push(&mut self, output: Option<&[u8]>) {
        if let Some(output) = output {
            self.ends.resize(self.classes, self.bytes.len() as u64);
            self.bytes.extend_from_slice(output);
        }
        self.classes += 1;
        if !self.ends.is_empty() || output.is_some() {
            self.ends.push(self.bytes.len() as u64);
        }
    }

    /// Class `n`'s output, unless it is its key.
    fn get(&self, n: usize) -> Option<&[u8]> {
        let end = *self.ends.get(n)? as usize;
        let start = n.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        (end > start).then(|| &self.bytes[start..end])
    }

    fn memory_bytes(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * size_of::<u64>()
    }
}

/// A spill error, with the space the whole spill would need, projected from
/// the share of the input read (`bytes_in` of `total_bytes`): the
/// partitions, then as much again at most for the survivors.
fn with_estimate(mut error: SpillError, total_bytes: Option<u64>, bytes_in: u64) -> SpillError {
    if let Some(total) = total_bytes
        && bytes_in > 0
    {
        let projected = (error.written as f64 * total as f64 / bytes_in as f64) as u64;
        error.needed = Some(projected.saturating_mul(2));
    }
    error
}

/// Why [`Dedup::finish`] stopped: the writer's error, or the spill's.
pub(crate) enum FinishError<E> {
    Write(E),
    Spill(SpillError),
}

const MIN_SPILL_MEMORY: u64 = 64 << 20;

/// Class `n` (in first-seen order) is not written at the end: flagged in
/// `order`, when the stage keeps one (it counts).
fn leave_out(order: &mut [u16], n: usize) {
    if let Some(shard) = order.get_mut(n) {
        *shard |= LEFT_OUT;
    }
}

/// Set in a class's entry of `order` when it is not written: held by the
/// seen store, or capped. Shards are fewer than it, so `% SHARDS` clears it.
const LEFT_OUT: u16 = 1 << 15;
const _: () = assert!(SHARDS <= LEFT_OUT as usize && (LEFT_OUT as usize).is_multiple_of(SHARDS));

/// Marks the first line of every class in the batch, all shards at once:
/// each shard takes its lines chunk by chunk, in input order. Before it looks
/// up a line, it asks for the table slot and the key bytes of the line
/// 2 × [`PREFETCH_AHEAD`] places on, and for the stored key that slot points
/// to for the line [`PREFETCH_AHEAD`] places on, so the cache misses of a
/// large set overlap.
///
/// A `full` set takes no new key: a line whose class it does not hold is
/// [`Fate::Spilled`].
fn dedup_batch(set: &mut DedupSet, batch: &[ChunkFates<'_>], maps: &[&[u8]], full: bool) {
    set.shards_mut()
        .par_iter_mut()
        .enumerate()
        .for_each_init(Vec::new, |run, (s, shard)| {
            run.clear();
            for (c, (_, fates)) in batch.iter().enumerate() {
                run.extend(fates.of_shard(s).iter().map(|&lookup| (c, lookup)));
            }
            for (k, &(c, lookup)) in run.iter().enumerate() {
                if let Some(&(c_ahead, ahead)) = run.get(k + 2 * PREFETCH_AHEAD) {
                    shard.prefetch(ahead.hash);
                    prefetch_bytes(ahead.bytes(&batch[c_ahead].0));
                }
                if let Some(&(_, ahead)) = run.get(k + PREFETCH_AHEAD) {
                    shard.prefetch_key(ahead.hash, maps);
                }
                let (p, fates) = &batch[c];
                let key = lookup.key(p);
                let fate = match full {
                    false if shard.insert(lookup.hash, key, maps) => Fate::First,
                    true if !shard.count_if_present(lookup.hash, key, maps) => Fate::Spilled,
                    _ => Fate::Duplicate,
                };
                fates.set(lookup.index(), fate);
            }
        });
}

/// How many lines ahead the dedup loop prefetches: enough to cover a
/// memory access's latency with the work of the lines in between.
const PREFETCH_AHEAD: usize = 8;
