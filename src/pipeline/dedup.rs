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

use hashbrown::HashTable;

use super::worker::key_hasher;

/// How many shards: enough that each one's table is small, few enough that a
/// batch gives each shard a run of lines.
pub const SHARDS: usize = 512;

/// The shard of a hash. hashbrown takes the bucket from the low bits and a
/// tag from the top seven: the shard comes from bits in between, so all
/// three stay independent.
#[inline]
pub fn shard_of(hash: u64) -> usize {
    (hash >> 32) as usize % SHARDS
}

/// Where a class's key is, packed in 64 bits: the top bit says whether the
/// key lies in a mapped input (then the next 23 bits are the input and the
/// low 40 its offset) or in the shard's arena (then the next 23 bits are the
/// arena block and the low 40 the offset in it).
#[derive(Clone, Copy, Debug)]
struct Place(u64);

impl Place {
    const IN_MAP: u64 = 1 << 63;
    const OFFSET_BITS: u32 = 40;

    fn new(in_map: bool, index: usize, offset: usize) -> Place {
        assert!(
            offset < 1 << Self::OFFSET_BITS && index < 1 << 23,
            "input too large to place a key in"
        );
        let flag = if in_map { Self::IN_MAP } else { 0 };
        Place(flag | (index as u64) << Self::OFFSET_BITS | offset as u64)
    }

    /// The bytes the key lies in, and where it starts in them.
    fn locate<'s>(self, arena: &'s Arena, maps: &[&'s [u8]]) -> (&'s [u8], usize) {
        let offset = (self.0 & ((1 << Self::OFFSET_BITS) - 1)) as usize;
        let index = ((self.0 & !Self::IN_MAP) >> Self::OFFSET_BITS) as usize;
        let bytes = if self.0 & Self::IN_MAP != 0 {
            maps[index]
        } else {
            &arena.blocks[index][..]
        };
        (bytes, offset)
    }
}

/// Copied keys, in blocks that are never reallocated: growing the arena
/// never copies what it holds.
#[derive(Default)]
struct Arena {
    blocks: Vec<Vec<u8>>,
}

impl Arena {
    const BLOCK: usize = 1 << 18;

    /// Copies `key` in; returns its block and offset.
    fn push(&mut self, key: &[u8]) -> (usize, usize) {
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= key.len());
        if !fits {
            self.blocks
                .push(Vec::with_capacity(Self::BLOCK.max(key.len())));
        }
        let index = self.blocks.len() - 1;
        let block = &mut self.blocks[index];
        block.extend_from_slice(key);
        (index, block.len() - key.len())
    }
}

/// A key to insert, and whether it can stay where it is.
#[derive(Clone, Copy, Debug)]
pub struct Key<'k> {
    pub bytes: &'k [u8],
    /// The key's place in a mapped input (`source`, `offset`), when it lies
    /// there unchanged for the whole run.
    pub in_map: Option<(u32, usize)>,
}

/// One shard: a small hash table over its classes, which are kept in
/// first-seen order as parallel vectors (12 bytes a class, 20 when counting).
/// Hashes are not stored: the table's tags filter candidates, and a rare
/// resize hashes the keys again.
#[derive(Default)]
pub struct Shard {
    table: HashTable<u32>,
    places: Vec<Place>,
    lens: Vec<u32>,
    /// Class sizes, kept only when counting.
    counts: Vec<u64>,
    counting: bool,
    arena: Arena,
}

impl Shard {
    fn new(counting: bool) -> Shard {
        Shard {
            counting,
            ..Shard::default()
        }
    }

    /// The key of class `id`.
    fn key<'s>(&'s self, id: usize, maps: &[&'s [u8]]) -> &'s [u8] {
        let (bytes, start) = self.places[id].locate(&self.arena, maps);
        &bytes[start..start + self.lens[id] as usize]
    }

    /// Adds one line's key, whose hash is `hash` (from [`key_hasher`]); says
    /// whether it is the first of its class. `maps` are the mapped inputs'
    /// bytes, by source.
    pub fn insert(&mut self, hash: u64, key: Key<'_>, maps: &[&[u8]]) -> bool {
        let found = self
            .table
            .find(hash, |&id| self.key(id as usize, maps) == key.bytes)
            .copied();
        if let Some(id) = found {
            if self.counting {
                self.counts[id as usize] += 1;
            }
            return false;
        }
        let place = match key.in_map {
            Some((source, offset)) => Place::new(true, source as usize, offset),
            None => {
                let (block, offset) = self.arena.push(key.bytes);
                Place::new(false, block, offset)
            }
        };
        let id = u32::try_from(self.places.len()).expect("fewer than 2^32 classes in one shard");
        self.places.push(place);
        self.lens.push(key.bytes.len() as u32);
        if self.counting {
            self.counts.push(1);
        }
        if self.table.len() == self.table.capacity() {
            self.grow(maps);
        }
        self.table.insert_unique(hash, id, |_| unreachable_rehash());
        true
    }

    /// Doubles the table, hashing every key again.
    #[cold]
    fn grow(&mut self, maps: &[&[u8]]) {
        let hasher = key_hasher();
        let additional = self.table.len().max(16);
        let Shard {
            table,
            places,
            lens,
            arena,
            ..
        } = self;
        table.reserve(additional, |&id| {
            let (bytes, start) = places[id as usize].locate(arena, maps);
            hasher.hash_one(&bytes[start..start + lens[id as usize] as usize])
        });
    }

    /// Makes room for `classes` more classes, so that growing rarely rehashes
    /// (only the pages used are ever touched).
    fn reserve(&mut self, classes: usize) {
        if self.table.is_empty() {
            self.table = HashTable::with_capacity(classes);
        }
        self.places.reserve(classes);
        self.lens.reserve(classes);
    }

    /// How many classes.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Whether the shard has no class.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// The key and size of the shard's `n`th class, in first-seen order (the
    /// size is 0 unless counting).
    pub fn class<'s>(&'s self, n: usize, maps: &[&'s [u8]]) -> (&'s [u8], u64) {
        (self.key(n, maps), self.counts.get(n).copied().unwrap_or(0))
    }
}

/// The table never resizes inside `insert_unique`: [`Shard::grow`] makes
/// room first, with the keys at hand.
fn unreachable_rehash() -> u64 {
    unreachable!("the table has room: Shard::grow ran first")
}

/// All shards.
///
/// ```
/// use urinorm::pipeline::dedup::DedupSet;
/// let mut set = DedupSet::new(false);
/// assert!(set.insert(b"http://a/"));
/// assert!(!set.insert(b"http://a/"));
/// assert!(set.insert(b"http://b/"));
/// assert_eq!(set.len(), 2);
/// ```
pub struct DedupSet {
    shards: Vec<Shard>,
}

impl DedupSet {
    /// An empty set; with `counting`, it keeps each class's size.
    pub fn new(counting: bool) -> DedupSet {
        DedupSet {
            shards: (0..SHARDS).map(|_| Shard::new(counting)).collect(),
        }
    }

    /// Inserts a key, copying it; says whether it is the first of its class.
    pub fn insert(&mut self, key: &[u8]) -> bool {
        let hash = key_hasher().hash_one(key);
        self.shards[shard_of(hash)].insert(
            hash,
            Key {
                bytes: key,
                in_map: None,
            },
            &[],
        )
    }

    /// Makes room for about `lines` distinct keys in all.
    pub fn reserve(&mut self, lines: usize) {
        let per_shard = lines / SHARDS + lines / SHARDS / 8 + 16;
        self.shards.iter_mut().for_each(|s| s.reserve(per_shard));
    }

    /// The shards, to work on in parallel.
    pub fn shards_mut(&mut self) -> &mut [Shard] {
        &mut self.shards
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.shards.iter().map(Shard::len).sum()
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(Shard::is_empty)
    }

    /// Each class's key and size, in first-seen order, given the shard of each
    /// class in that order (`order`, one entry per class).
    pub fn classes_in_order<'s>(
        &'s self,
        order: &'s [u16],
        maps: &'s [&'s [u8]],
    ) -> impl Iterator<Item = (&'s [u8], u64)> + 's {
        // Within a shard, classes are in first-seen order: one cursor each.
        let mut next = vec![0usize; SHARDS];
        order.iter().map(move |&shard| {
            let shard = shard as usize;
            let n = next[shard];
            next[shard] += 1;
            self.shards[shard].class(n, maps)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                            in_map: None
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
            in_map: Some((0, offset)),
        };
        let hash = |offset: usize| key_hasher().hash_one(&map[offset..offset + 9]);
        assert!(shard.insert(hash(0), key(0), &maps));
        assert!(shard.insert(hash(10), key(10), &maps));
        assert!(!shard.insert(hash(20), key(20), &maps));
        assert!(!shard.insert(
            hash(0),
            Key {
                bytes: b"http://a/",
                in_map: None
            },
            &maps
        ));
        assert_eq!(shard.class(0, &maps), (&b"http://a/"[..], 3));
        assert!(shard.arena.blocks.is_empty(), "nothing was copied");
    }
}
