//! Stable 128-bit fingerprints of keys, for what outlives a run or leaves
//! the process: the seen store's runs, and the fingerprints Python and
//! Spark keep. Unlike the in-memory hashes (the engine's ahash,
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
/// use urinorm_uri::fingerprint::fingerprint;
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

    /// XXH3 takes a different path for keys of 0, 1–3, 4–8, 9–16, 17–128,
    /// 129–240 and over 240 bytes: a known answer on each side of every
    /// boundary, from xxHash 0.8.4's C library (through Python's `xxhash`
    /// 4.1.0), over bytes `i * 131 % 251`. Distinct keys of every length up
    /// to 300 give distinct fingerprints.
    #[test]
    fn known_answers_on_every_length_path() {
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 131 % 251) as u8).collect();
        let cases: [(usize, u128); 9] = [
            (3, 0x1cef1b449ba11392c3abf7ae2e250b5a),
            (8, 0xc37b9c609b812e65b97ca908010cab60),
            (16, 0x7bf040f53be48d8c0deb840adcd7a040),
            (17, 0xae2ff3252c52ad5ea10cdcc2393322b0),
            (128, 0xace2e3f98ca779b2f5f648d02c5ea199),
            (129, 0x494edab225dff56e189d01656e6adaee),
            (240, 0x79eeb64cc139b65a64acbec064796cc2),
            (241, 0x8c10a157d96fb846179ead905bf75a05),
            (300, 0xbc089b4aeb63f7382b8fff0c222a0f22),
        ];
        for (len, expected) in cases {
            assert_eq!(
                fingerprint(&bytes[..len]),
                expected.to_be_bytes(),
                "{len} bytes"
            );
        }
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
