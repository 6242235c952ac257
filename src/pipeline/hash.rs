//! The in-memory hashes of keys, and every seed they use: a 64-bit hash for
//! the dedup set, and 128-bit fingerprints for the ladder's counts. Seeds
//! are fixed, so a run is reproducible; ahash's output may change across
//! versions and machines, so nothing hashed here is ever persisted.

use std::hash::{BuildHasherDefault, Hasher};

use ahash::RandomState;

/// The hasher of keys for the dedup set.
pub(crate) fn key_hasher() -> RandomState {
    RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    )
}

/// 128-bit fingerprints for in-memory counting (the ladder): two
/// independent 64-bit hashes. A collision among 10^9 keys has a probability
/// near 10^-21. Not [`crate::fingerprint`], the stable one for what is
/// persisted.
pub(crate) struct InMemoryPrints {
    high: RandomState,
    low: RandomState,
}

impl InMemoryPrints {
    pub(crate) fn new() -> InMemoryPrints {
        InMemoryPrints {
            high: RandomState::with_seeds(1, 2, 3, 4),
            low: RandomState::with_seeds(5, 6, 7, 8),
        }
    }

    /// The fingerprint of `key`, never 0 (which callers may use as "none").
    pub(crate) fn of(&self, key: &[u8]) -> u128 {
        let print = u128::from(self.high.hash_one(key)) << 64 | u128::from(self.low.hash_one(key));
        print.max(1)
    }

    /// A 64-bit hash of `bytes`, uniform over `u64`.
    pub(crate) fn short(&self, bytes: &[u8]) -> u64 {
        self.high.hash_one(bytes)
    }
}

/// A map keyed by fingerprints, which are already uniformly random: their
/// own bits are the hash.
pub(crate) type PrintHasher = BuildHasherDefault<FoldHasher>;

#[derive(Default)]
pub(crate) struct FoldHasher(u64);

impl Hasher for FoldHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = n as u64;
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}
