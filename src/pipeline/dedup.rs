//! The set of keys seen so far: each distinct key once, in the order first
//! seen, with how many lines had it.
//!
//! Lines arrive in input order, so the first insertion of a key is its first
//! occurrence by input position, whatever thread normalized it. The set is
//! split into many small hash tables by bits of the hash, so each stays
//! within a core's cache, and equality is decided on the bytes, never on the
//! hash alone: two keys with the same 64-bit hash stay two classes.

use hashbrown::HashTable;

/// How many tables the set is split into.
const SHARDS: usize = 512;

/// One equivalence class: its key's place in the arena, and its size.
#[derive(Clone, Copy)]
struct Class {
    hash: u64,
    start: usize,
    len: u32,
    count: u64,
}

/// Distinct keys, in first-seen order.
///
/// ```
/// use urinorm::pipeline::dedup::DedupSet;
/// let mut set = DedupSet::new();
/// assert!(set.insert(7, b"http://a/"));
/// assert!(!set.insert(7, b"http://a/"));
/// assert!(set.insert(7, b"http://b/")); // same hash, other bytes: another class
/// assert_eq!(set.classes().collect::<Vec<_>>(), [(&b"http://a/"[..], 2), (&b"http://b/"[..], 1)]);
/// ```
pub struct DedupSet {
    shards: Vec<HashTable<u32>>,
    classes: Vec<Class>,
    /// Every distinct key, stored once, back to back.
    arena: Vec<u8>,
}

impl Default for DedupSet {
    fn default() -> Self {
        DedupSet::new()
    }
}

impl DedupSet {
    pub fn new() -> DedupSet {
        DedupSet {
            shards: (0..SHARDS).map(|_| HashTable::new()).collect(),
            classes: Vec::new(),
            arena: Vec::new(),
        }
    }

    /// Adds one line's key; says whether it is the first of its class.
    pub fn insert(&mut self, hash: u64, key: &[u8]) -> bool {
        // hashbrown uses the low bits for the bucket and the top seven as a
        // tag: the shard comes from bits in between, so both stay spread.
        let shard = &mut self.shards[(hash >> 32) as usize % SHARDS];
        let (classes, arena) = (&mut self.classes, &self.arena);
        let found = shard.find(hash, |&id| {
            let class = &classes[id as usize];
            class.hash == hash && arena[class.start..class.start + class.len as usize] == *key
        });
        if let Some(&id) = found {
            classes[id as usize].count += 1;
            return false;
        }
        let id = u32::try_from(classes.len()).expect("fewer than 2^32 distinct keys in memory");
        classes.push(Class {
            hash,
            start: self.arena.len(),
            len: key.len() as u32,
            count: 1,
        });
        self.arena.extend_from_slice(key);
        let classes = &self.classes;
        shard.insert_unique(hash, id, |&id| classes[id as usize].hash);
        true
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// Each class's key and size, in first-seen order.
    pub fn classes(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.classes
            .iter()
            .map(|c| (&self.arena[c.start..c.start + c.len as usize], c.count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a naive oracle: a linear scan of the keys seen.
    #[test]
    fn agrees_with_a_linear_scan_even_when_every_hash_collides() {
        let keys: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| format!("k{}", i % 700).into_bytes())
            .collect();
        for constant_hash in [false, true] {
            let mut set = DedupSet::new();
            let mut seen: Vec<&[u8]> = Vec::new();
            for (i, key) in keys.iter().enumerate() {
                let hash = if constant_hash {
                    42
                } else {
                    (i as u64 % 700).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                };
                let first = !seen.contains(&key.as_slice());
                if first {
                    seen.push(key);
                }
                assert_eq!(set.insert(hash, key), first);
            }
            assert_eq!(set.len(), 700);
            assert!(set.classes().all(|(_, count)| count >= 2));
        }
    }
}
