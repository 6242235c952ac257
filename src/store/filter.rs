//! A run's filter: for each block of a run, a split-block Bloom filter of
//! its prints, so that a lookup of a key the run does not hold reads no
//! block (`Run::join`), in all but a small fraction of lookups.
//!
//! A block's filter is [`FILTER_WORDS`] 32-bit words: [`BUCKETS`] buckets
//! of 8 words (256 bits). A print sets one bit in each word of one bucket
//! (the split-block design of Putze, Sanders and Singler, "Cache-, Hash- and
//! Space-Efficient Bloom Filters", 2007, as Parquet writes it): a lookup
//! touches one 32-byte bucket. The bits come from the print's low 64 bits,
//! which a block's sorted prints do not share; the print is already a
//! stable hash (`crate::fingerprint`), so nothing here hashes again, and a
//! filter on disk never depends on a hash that could change.
//!
//! 20 bits per key of a full block: measured, 1 in about 2,600 lookups of
//! an absent key (0.04 %) passes one run's filter
//! (`filter_passes_few_absent_keys`), so that even against the 20 runs of a
//! store grown by many small commits, 99 % of them read no block.
//!
//! It knows prints and words; not files or stamps.

/// Buckets per block's filter.
pub(crate) const BUCKETS: usize = 320;
const BUCKET_WORDS: usize = 8;
/// Words per block's filter: 20 bits per print of a full block of 4096.
pub(crate) const FILTER_WORDS: usize = BUCKETS * BUCKET_WORDS;

/// One odd multiplier per word of a bucket, each spreading the print's
/// low 32 bits over that word's 32 bits differently (Parquet's constants).
const SALTS: [u32; BUCKET_WORDS] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The bucket a print falls in, and the bit it sets in each of its words.
fn bits(print: u128) -> (usize, [u32; BUCKET_WORDS]) {
    let low = print as u64;
    // The high half of the low 64 bits, scaled onto the buckets.
    let bucket = ((low >> 32) * BUCKETS as u64) >> 32;
    let key = low as u32;
    let masks = SALTS.map(|salt| 1u32 << (key.wrapping_mul(salt) >> 27));
    (bucket as usize, masks)
}

/// Adds `print` to `filter`, one block's words.
pub(crate) fn insert(filter: &mut [u32], print: u128) {
    let (bucket, masks) = bits(print);
    let words = &mut filter[bucket * BUCKET_WORDS..][..BUCKET_WORDS];
    for (word, mask) in words.iter_mut().zip(masks) {
        *word |= mask;
    }
}

/// Whether `filter` (one block's words) may hold `print`: false only if
/// `print` was never inserted.
pub(crate) fn may_hold(filter: &[u32], print: u128) -> bool {
    let (bucket, masks) = bits(print);
    let words = &filter[bucket * BUCKET_WORDS..][..BUCKET_WORDS];
    words
        .iter()
        .zip(masks)
        .all(|(word, mask)| word & mask == mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::fingerprint;

    fn print(i: u64) -> u128 {
        u128::from_be_bytes(fingerprint(format!("https://example.com/{i}").as_bytes()))
    }

    #[test]
    fn every_print_inserted_passes() {
        let mut filter = vec![0u32; FILTER_WORDS];
        let prints: Vec<u128> = (0..4096).map(print).collect();
        for &p in &prints {
            insert(&mut filter, p);
        }
        assert!(prints.iter().all(|&p| may_hold(&filter, p)));
    }

    /// The rate the module's documentation states, on real fingerprints: a
    /// full block's filter, asked about a million keys it does not hold.
    #[test]
    fn filter_passes_few_absent_keys() {
        let blocks = 8;
        let mut filters = vec![vec![0u32; FILTER_WORDS]; blocks];
        for i in 0..4096 * blocks as u64 {
            insert(&mut filters[(i % blocks as u64) as usize], print(i));
        }
        let asked = 1_000_000u64;
        let passed = (0..asked)
            .filter(|&i| may_hold(&filters[(i % blocks as u64) as usize], print(1 << 40 | i)))
            .count() as u64;
        assert!(
            passed * 2_000 < asked,
            "{passed} of {asked} absent keys passed"
        );
        assert!(passed > 0, "a Bloom filter that never errs is suspicious");
    }
}
