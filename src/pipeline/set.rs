//! The set of keys seen so far: each distinct key once, with the size of its
//! class, split into many shards by bits of the key's hash.
//!
//! Shards are independent, so a batch of lines is deduplicated on all cores
//! at once: each shard takes its own lines in input order, so within it the
//! first insertion of a key is the key's first occurrence by input position,
//! whatever thread normalized it. Equality is decided on the bytes, never on
//! the hash alone: two keys with the same 64-bit hash stay two classes.
//!
//! A key that is a line of a memory-mapped input, unchanged, is not copied:
//! the shard keeps its place in the map. Other keys are copied once into
//! the shard's arena.
//!
//! It knows keys and hashes: not lines, chunks or what a key means.

use rayon::prelude::*;

#[cfg(test)]
use super::hash::key_hasher;
use super::place::{Arena, Place};

/// How many shards: enough that each one's table is small, few enough that a
/// batch gives each shard a run of lines.
pub(crate) const SHARDS: usize = 512;

/// The shard of a hash. A shard's table probes from the low 32 bits, so the
/// shard comes from the bits above them and the two stay independent.
#[inline]
pub(crate) fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

/// A key to insert, and whether it can stay where it is.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'k> {
    pub(crate) bytes: &'k [u8],
    /// The key's place in a mapped input, when it lies there unchanged for
    /// the whole run.
    pub(crate) in_input: Option<Place>,
}

/// A slot of a shard's table: 16 bytes, four to a cache line.
#[derive(Clone, Copy, Default, Debug)]
struct Slot {
    /// The low 32 bits of the key's hash: where the key probes from, and a
    /// filter before any byte comparison.
    hash: u32,
    /// The key's length plus one; 0 marks an empty slot.
    len_plus_one: u32,
    /// The key's [`Place`]; when counting, the class's number instead.
    data: u64,
}

/// An open-addressing table with linear probing. Written for this job
/// rather than taken from hashbrown because the dedup loop must know where a
/// key will probe, to prefetch it several keys ahead: a large set is
/// memory-bound, and overlapping the cache misses is what makes it fast.
struct Slots {
    slots: Vec<Slot>,
    len: usize,
}

impl Slots {
    fn with_capacity(keys: usize) -> Slots {
        // At most 5/8 full, a power of two so the mask is the modulo.
        let size = (keys * 8 / 5 + 1).next_power_of_two().max(16);
        Slots {
            slots: vec![Slot::default(); size],
            len: 0,
        }
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Empties every slot, keeping the table's size.
    fn clear(&mut self) {
        self.slots.fill(Slot::default());
        self.len = 0;
    }

    /// Asks the CPU to start loading where `hash` probes from.
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        let slot = &self.slots[hash as u32 as usize & self.mask()];
        prefetch(slot as *const Slot as *const u8);
    }

    /// The slot holding the key that `same` recognizes, or the empty slot
    /// where it belongs.
    #[inline]
    fn probe(&self, hash: u64, len: u32, same: impl Fn(u64) -> bool) -> Result<usize, usize> {
        let (hash, mask) = (hash as u32, self.mask());
        let mut i = hash as usize & mask;
        loop {
            let slot = self.slots[i];
            if slot.len_plus_one == 0 {
                return Err(i);
            }
            if slot.hash == hash && slot.len_plus_one == len + 1 && same(slot.data) {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether one more key would pass 5/8 full.
    fn is_full(&self) -> bool {
        (self.len + 1) * 8 > self.slots.len() * 5
    }

    /// Doubles the table. Slots keep the hash bits they probe from, so no key
    /// is hashed again (a shard never holds 2^32 slots).
    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![Slot::default(); old.len() * 2];
        let mask = self.mask();
        for slot in old.into_iter().filter(|s| s.len_plus_one != 0) {
            let mut i = slot.hash as usize & mask;
            while self.slots[i].len_plus_one != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = slot;
        }
    }
}

/// Starts loading the cache line at `address`; a hint with no other effect.
#[inline(always)]
pub(crate) fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint: it never faults, whatever the address,
    // and SSE, which it needs, is part of every x86-64 CPU.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Starts loading the first and the last cache line of `bytes`: a key
/// rarely spans more than two.
#[inline(always)]
pub(crate) fn prefetch_bytes(bytes: &[u8]) {
    prefetch(bytes.as_ptr());
    prefetch(bytes.as_ptr().wrapping_add(bytes.len().saturating_sub(1)));
}

/// A class of a counting shard: where its key lies and how many lines it
/// has. 16 bytes: a counting set keeps one per class beside its table.
#[derive(Clone, Copy, Debug)]
struct Class {
    place: Place,
    len: u32,
    /// The class's size, up to `u32::MAX`; past it, in [`Shard::large`].
    size: u32,
}

/// One shard: a table over its classes. Only when counting does it also keep
/// the classes in first-seen order with their sizes.
pub(crate) struct Shard {
    slots: Slots,
    counting: bool,
    /// When counting: each class, by number.
    ordered: Vec<Class>,
    /// The sizes of the classes of more than `u32::MAX` lines, by number.
    large: ahash::HashMap<u32, u64>,
    arena: Arena,
}

impl Shard {
    fn new(counting: bool) -> Shard {
        Shard {
            slots: Slots::with_capacity(0),
            counting,
            ordered: Vec::new(),
            large: ahash::HashMap::default(),
            arena: Arena::default(),
        }
    }

    /// The key a slot's `data` names.
    fn key_of<'s>(&'s self, data: u64, len: u32, maps: &[&'s [u8]]) -> &'s [u8] {
        self.place_of(data).bytes(len as usize, &self.arena, maps)
    }

    /// The place of the key a slot's `data` names.
    fn place_of(&self, data: u64) -> Place {
        if self.counting {
            self.ordered[data as usize].place
        } else {
            Place::from_bits(data)
        }
    }

    /// Starts loading where `hash` probes, ahead of its [`Shard::insert`].
    #[inline(always)]
    pub(crate) fn prefetch(&self, hash: u64) {
        self.slots.prefetch(hash);
    }

    /// Later, once the slot is likely loaded: when it holds a key with the
    /// same hash bits (a probable duplicate), starts loading that key's bytes.
    #[inline(always)]
    pub(crate) fn prefetch_key(&self, hash: u64, maps: &[&[u8]]) {
        let slot = self.slots.slots[hash as u32 as usize & self.slots.mask()];
        if slot.len_plus_one != 0 && slot.hash == hash as u32 {
            let len = slot.len_plus_one as usize - 1;
            prefetch_bytes(self.place_of(slot.data).bytes(len, &self.arena, maps));
        }
    }

    /// Adds one line's key, whose hash is `hash`; says whether it is the
    /// first of its class. `maps` are the mapped inputs' bytes, by source.
    pub(crate) fn insert(&mut self, hash: u64, key: Key<'_>, maps: &[&[u8]]) -> bool {
        if self.slots.is_full() {
            self.slots.grow();
        }
        let Err(empty) = self.count(hash, key.bytes, maps) else {
            return false;
        };
        let len = key.bytes.len() as u32;
        let place = match key.in_input {
            Some(place) => place,
            // Arena blocks grow to 256 KiB: 2^23 of them hold about 2 TiB of
            // keys, far past any memory limit.
            None => self
                .arena
                .push(&[key.bytes])
                .expect("fewer than 2 TiB of distinct keys in memory"),
        };
        let data = if self.counting {
            self.ordered.push(Class {
                place,
                len,
                size: 1,
            });
            (self.ordered.len() - 1) as u64
        } else {
            place.to_bits()
        };
        self.slots.slots[empty] = Slot {
            hash: hash as u32,
            len_plus_one: len + 1,
            data,
        };
        self.slots.len += 1;
        true
    }

    /// Like [`Shard::insert`], but never adds a class: counts the key when
    /// its class is there, and says whether it was. A set that has reached
    /// its memory limit is used so, while new keys go elsewhere.
    pub(crate) fn count_if_present(&mut self, hash: u64, key: Key<'_>, maps: &[&[u8]]) -> bool {
        self.count(hash, key.bytes, maps).is_ok()
    }

    /// Finds the class of `key` and counts one more line in it, or says
    /// which empty slot it belongs in.
    fn count(&mut self, hash: u64, key: &[u8], maps: &[&[u8]]) -> Result<(), usize> {
        let len = u32::try_from(key.len()).expect("a key shorter than 4 GiB");
        let found = self
            .slots
            .probe(hash, len, |data| self.key_of(data, len, maps) == key)?;
        if self.counting {
            self.count_one(self.slots.slots[found].data as u32);
        }
        Ok(())
    }

    /// One more line in class `n`.
    #[inline]
    fn count_one(&mut self, n: u32) {
        let class = &mut self.ordered[n as usize];
        match class.size.checked_add(1) {
            Some(size) => class.size = size,
            None => *self.large.entry(n).or_insert(u64::from(u32::MAX)) += 1,
        }
    }

    /// The bytes the shard holds: its table, its copied keys and, when
    /// counting, its classes' order and sizes (capacity, not use).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.slots.slots.len() * size_of::<Slot>()
            + self.arena.memory_bytes()
            + self.ordered.capacity() * size_of::<Class>()
    }

    /// Forgets every class, keeping the memory to fill again.
    fn clear(&mut self) {
        self.slots.clear();
        self.arena.clear();
        self.ordered.clear();
        self.large.clear();
    }

    /// Makes room for `classes` classes, so that growing rarely rehashes.
    /// The table is written empty at once, every page of it: measured, that
    /// is cheaper here than a table left to be zeroed page by page as keys
    /// land in it (CHANGELOG.md, "Throughput, round 3").
    fn reserve(&mut self, classes: usize) {
        if self.slots.len == 0 {
            self.slots = Slots::with_capacity(classes);
        }
        if self.counting {
            self.ordered.reserve(classes);
        }
    }

    /// How many classes.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len
    }

    /// The size of the shard's `n`th class, in first-seen order. Only a
    /// counting shard keeps them.
    fn size(&self, n: usize) -> u64 {
        match self.ordered[n].size {
            u32::MAX => self
                .large
                .get(&(n as u32))
                .copied()
                .unwrap_or(u64::from(u32::MAX)),
            size => u64::from(size),
        }
    }

    /// Starts loading the entry of the shard's `n`th class, ahead of its
    /// [`Shard::prefetch_class_key`].
    #[inline(always)]
    fn prefetch_class(&self, n: usize) {
        if let Some(class) = self.ordered.get(n) {
            prefetch(class as *const Class as *const u8);
        }
    }

    /// Later, once the entry is likely loaded: starts loading the key of
    /// the shard's `n`th class, ahead of its [`Shard::class`].
    #[inline(always)]
    fn prefetch_class_key(&self, n: usize, maps: &[&[u8]]) {
        if let Some(class) = self.ordered.get(n) {
            prefetch_bytes(class.place.bytes(class.len as usize, &self.arena, maps));
        }
    }

    /// The key and size of the shard's `n`th class, in first-seen order.
    /// Only a counting shard keeps that order.
    pub(crate) fn class<'s>(&'s self, n: usize, maps: &[&'s [u8]]) -> (&'s [u8], u64) {
        assert!(
            self.counting,
            "only a counting shard keeps its classes in order"
        );
        let Class { place, len, .. } = self.ordered[n];
        (place.bytes(len as usize, &self.arena, maps), self.size(n))
    }
}

/// All shards.
pub(crate) struct DedupSet {
    shards: Vec<Shard>,
}

impl DedupSet {
    /// An empty set; with `counting`, it keeps each class's size.
    pub(crate) fn new(counting: bool) -> DedupSet {
        DedupSet {
            shards: (0..SHARDS).map(|_| Shard::new(counting)).collect(),
        }
    }

    /// Inserts a key, copying it; says whether it is the first of its class.
    #[cfg(test)]
    pub(crate) fn insert(&mut self, key: &[u8]) -> bool {
        let hash = key_hasher().hash_one(key);
        self.shards[shard_of(hash)].insert(
            hash,
            Key {
                bytes: key,
                in_input: None,
            },
            &[],
        )
    }

    /// Makes room for about `lines` distinct keys in all.
    pub(crate) fn reserve(&mut self, lines: usize) {
        let per_shard = lines / SHARDS + 16;
        self.shards
            .par_iter_mut()
            .for_each(|s| s.reserve(per_shard));
    }

    /// Forgets every class, keeping its tables and copied keys' blocks to
    /// fill again: a set cleared again and again (a live run's) takes no
    /// more memory than it did the first time.
    pub(crate) fn clear(&mut self) {
        self.shards.iter_mut().for_each(Shard::clear);
    }

    /// The shards, to work on in parallel.
    pub(crate) fn shards_mut(&mut self) -> &mut [Shard] {
        &mut self.shards
    }

    /// Drops every shard's table, the larger part of a set, and gives its
    /// memory back: a counting set's classes can still be read, in order,
    /// but no key looked up. What is made from the classes next (a bulk
    /// join's fingerprints) takes the table's place rather than adding to
    /// the run's peak.
    pub(crate) fn drop_tables(&mut self) {
        for shard in &mut self.shards {
            shard.slots = Slots {
                slots: Vec::new(),
                len: 0,
            };
        }
        crate::sys::memory::give_back();
    }

    /// How many distinct keys.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(Shard::len).sum()
    }

    /// The bytes the set holds, all shards together.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.shards.iter().map(Shard::memory_bytes).sum()
    }

    /// Each class's key and size, in first-seen order, given the shard of each
    /// class in that order (`order`, one entry per class). The set must be counting.
    pub(crate) fn classes_in_order<'s>(
        &'s self,
        order: &'s [u16],
        maps: &'s [&'s [u8]],
    ) -> impl Iterator<Item = (&'s [u8], u64)> + 's {
        in_order(order).map(move |(shard, n)| self.shards[shard].class(n, maps))
    }
}

impl DedupSet {
    /// Each class's key and size, in first-seen order, as
    /// [`DedupSet::classes_in_order`] gives them, gathered on the current
    /// rayon pool: `order` is cut into pieces, each started at its own
    /// cursors.
    pub(crate) fn classes_gathered<'s>(
        &'s self,
        order: &[u16],
        maps: &'s [&'s [u8]],
    ) -> Vec<(&'s [u8], u64)> {
        let mut classes = vec![(&b""[..], 0u64); order.len()];
        self.fill_in_order(order, maps, &mut classes, |_, key, size| (key, size));
        classes
    }

    /// Fills `out`, one entry per class in first-seen order, with what
    /// `make` makes of the class's number in that order, its key and its
    /// size, on the current rayon pool: `order` is cut into pieces, each
    /// started at its own cursors. The keys are read in the order they came
    /// in, so the input is read forward, not at random; the classes' entries
    /// and copied keys, spread over the shards, are loaded several classes
    /// ahead, as the dedup loop loads its slots.
    pub(crate) fn fill_in_order<'s, T: Send>(
        &'s self,
        order: &[u16],
        maps: &[&'s [u8]],
        out: &mut [T],
        make: impl Fn(usize, &'s [u8], u64) -> T + Sync,
    ) {
        const PIECE: usize = 1 << 16;
        // Where each piece starts in every shard: one pass of counting.
        let mut starts = Vec::with_capacity(order.len().div_ceil(PIECE));
        let mut next = vec![0u32; SHARDS];
        for piece in order.chunks(PIECE) {
            starts.push(next.clone());
            for &shard in piece {
                next[shard as usize % SHARDS] += 1;
            }
        }
        out.par_chunks_mut(PIECE)
            .zip(order.par_chunks(PIECE))
            .zip(starts)
            .enumerate()
            .for_each(|(at, ((out, piece), mut next))| {
                const WINDOW: usize = 1024;
                const AHEAD: usize = 8;
                let mut classes = Vec::with_capacity(WINDOW);
                for (w, (out, window)) in
                    out.chunks_mut(WINDOW).zip(piece.chunks(WINDOW)).enumerate()
                {
                    // Each class's shard and number in it, to look ahead.
                    classes.clear();
                    classes.extend(window.iter().map(|&shard| {
                        let shard = shard as usize % SHARDS;
                        next[shard] += 1;
                        (&self.shards[shard], next[shard] as usize - 1)
                    }));
                    for (i, slot) in out.iter_mut().enumerate() {
                        if let Some(&(shard, n)) = classes.get(i + 2 * AHEAD) {
                            shard.prefetch_class(n);
                        }
                        if let Some(&(shard, n)) = classes.get(i + AHEAD) {
                            shard.prefetch_class_key(n, maps);
                        }
                        let (shard, n) = classes[i];
                        let (key, size) = shard.class(n, maps);
                        *slot = make(at * PIECE + w * WINDOW + i, key, size);
                    }
                }
            });
    }
}

/// Each class's shard and number in it, in first-seen order, given the
/// shard of each class in that order (modulo [`SHARDS`]: the caller may
/// keep flags in the bits above): within a shard, classes are in
/// first-seen order, so one cursor each.
fn in_order(order: &[u16]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut next = vec![0usize; SHARDS];
    order.iter().map(move |&shard| {
        let shard = shard as usize % SHARDS;
        next[shard] += 1;
        (shard, next[shard] - 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_first_once() {
        let mut set = DedupSet::new(false);
        assert!(set.insert(b"http://a/"));
        assert!(!set.insert(b"http://a/"));
        assert!(set.insert(b"http://b/"));
        assert_eq!(set.len(), 2);
    }

    /// Against a naive oracle: a linear scan of the keys seen. Hashes are
    /// forced to collide (all equal, or few distinct), so equality must come
    /// from the bytes; the table grows many times on the way.
    #[test]
    fn agrees_with_a_linear_scan_even_when_hashes_collide() {
        let keys: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| format!("k{}", i % 1100).into_bytes())
            .collect();
        for distinct_hashes in [1u64, 7, u64::MAX] {
            let mut shard = Shard::new(true);
            let mut seen: Vec<&[u8]> = Vec::new();
            for key in &keys {
                let hash = key_hasher().hash_one(key) % distinct_hashes;
                let first = !seen.contains(&key.as_slice());
                if first {
                    seen.push(key);
                }
                // Growth rehashes with the real hash; only equal hashes matter here.
                let hash = if distinct_hashes == u64::MAX {
                    key_hasher().hash_one(key)
                } else {
                    hash
                };
                if distinct_hashes != u64::MAX {
                    shard.reserve(4096);
                }
                assert_eq!(
                    shard.insert(
                        hash,
                        Key {
                            bytes: key,
                            in_input: None
                        },
                        &[]
                    ),
                    first
                );
            }
            assert_eq!(shard.len(), 1100);
            let classes: Vec<_> = (0..shard.len()).map(|n| shard.class(n, &[])).collect();
            assert_eq!(classes.iter().map(|(k, _)| *k).collect::<Vec<_>>(), seen);
            assert!(classes.iter().all(|&(_, count)| count >= 2));
        }
    }

    #[test]
    fn a_class_counts_past_four_billion_lines() {
        let mut shard = Shard::new(true);
        let key = Key {
            bytes: b"http://a/",
            in_input: None,
        };
        let hash = key_hasher().hash_one(key.bytes);
        assert!(shard.insert(hash, key, &[]));
        shard.ordered[0].size = u32::MAX - 1;
        for _ in 0..3 {
            assert!(!shard.insert(hash, key, &[]));
        }
        assert_eq!(shard.class(0, &[]).1, u64::from(u32::MAX) + 2);
    }

    #[test]
    fn classes_come_back_in_first_seen_order_across_shards() {
        let mut set = DedupSet::new(true);
        let mut order = Vec::new();
        let keys: Vec<String> = (0..5000)
            .map(|i| format!("http://h{}/", i % 1234))
            .collect();
        for key in &keys {
            if set.insert(key.as_bytes()) {
                order.push(shard_of(key_hasher().hash_one(key.as_bytes())) as u16);
            }
        }
        let classes: Vec<_> = set.classes_in_order(&order, &[]).collect();
        let expected: Vec<String> = (0..1234).map(|i| format!("http://h{i}/")).collect();
        assert_eq!(
            classes
                .iter()
                .map(|(k, _)| std::str::from_utf8(k).unwrap())
                .collect::<Vec<_>>(),
            expected
        );
        assert_eq!(classes.iter().map(|&(_, c)| c).sum::<u64>(), 5000);
    }

    #[test]
    fn keys_in_a_map_are_compared_where_they_lie() {
        let map: &[u8] = b"http://a/\nhttp://b/\nhttp://a/\n";
        let maps = [map];
        let mut shard = Shard::new(true);
        let key = |offset: usize| Key {
            bytes: &map[offset..offset + 9],
            in_input: Some(Place::in_input(0, offset).unwrap()),
        };
        let hash = |offset: usize| key_hasher().hash_one(&map[offset..offset + 9]);
        assert!(shard.insert(hash(0), key(0), &maps));
        assert!(shard.insert(hash(10), key(10), &maps));
        assert!(!shard.insert(hash(20), key(20), &maps));
        assert!(!shard.insert(
            hash(0),
            Key {
                bytes: b"http://a/",
                in_input: None
            },
            &maps
        ));
        assert_eq!(shard.class(0, &maps), (&b"http://a/"[..], 3));
        assert!(shard.arena.is_empty(), "nothing was copied");
    }
}
