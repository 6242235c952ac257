//! Stable 128-bit fingerprints of keys, for what outlives a run or leaves
//! the process: the seen store's runs, and the fingerprints Python and
//! Spark keep. Unlike the in-memory hashes ([`crate::pipeline`]'s ahash,
//! whose output may change across versions and machines), a fingerprint
//! is a documented function of the key's bytes alone:
//!
//! **XXH3-128 with seed 0** over the key's bytes (xxHash's output is frozen
//! since xxHash 0.8.0, identical on every platform and endianness), written
//! as its canonical 16 bytes, most significant first, so that the byte order
//! of fingerprints is their numeric order. The known-answer tests below pin it.
//!
//! Two distinct keys share a fingerprint with probability 2^-128; among
//! 10^10 keys, the chance that any two do is about 1.5 × 10^-19.
//!
//! It knows bytes, nothing of what a key means.

use twox_hash::XxHash3_128;

/// A key's fingerprint: XXH3-128 (seed 0), big-endian.
pub type Fingerprint = [u8; 16];

/// The fingerprint of `key`.
///
/// ```
/// use urinorm::fingerprint::fingerprint;
/// let print = fingerprint(b"http://example.com/");
/// assert_eq!(u128::from_be_bytes(print), 0x42663426682770e605cd77c9b152d153);
/// ```
pub fn fingerprint(key: &[u8]) -> Fingerprint {
    XxHash3_128::oneshot(key).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answers: XXH3-128, seed 0, as xxHash's own implementation
    /// gives them (the same from the C library through Python's `xxhash`
    /// and from both Rust crates), most significant byte first.
    #[test]
    fn known_answers() {
        let cases: [(&[u8], u128); 4] = [
            (b"", 0x99aa06d3014798d86001c324468d497f),
            (b"a", 0xa96faf705af16834e6c632b61e964e1f),
            (b"abc", 0x06b05ab6733a618578af5f94892f3950),
            (b"http://example.com/", 0x42663426682770e605cd77c9b152d153),
        ];
        for (key, expected) in cases {
            assert_eq!(fingerprint(key), expected.to_be_bytes(), "{key:?}");
        }
    }

    /// xxHash's sanity-check vectors cover lengths where the algorithm
    /// changes path (0, 1–3, 4–8, 9–16, 17–128, 129–240, over 240): every
    /// path must give distinct, stable output. Keys of every length up to
    /// 300 bytes give distinct fingerprints, and the same ones twice.
    #[test]
    fn every_length_path_is_deterministic_and_distinct() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 131 % 251) as u8).collect();
        let prints: Vec<Fingerprint> = (0..=bytes.len())
            .map(|n| fingerprint(&bytes[..n]))
            .collect();
        let again: Vec<Fingerprint> = (0..=bytes.len())
            .map(|n| fingerprint(&bytes[..n]))
            .collect();
        assert_eq!(prints, again);
        let mut sorted = prints.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), prints.len());
    }
}
