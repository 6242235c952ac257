//! Byte tests eight bytes at a time ("SIMD within a register"), for the
//! normalizer's fast path: does an ASCII string hold an upper-case letter, or
//! a `/.` pair (where a dot segment could start)?
//!
//! Naive versions they replace, and are tested against:
//! `s.iter().any(u8::is_ascii_uppercase)` and `s.windows(2).any(|w| w == b"/.")`.
//! Beside them, the byte searches the transforms share: a pair of bytes,
//! a needle with ASCII case aside.
//!
//! It knows bytes, nothing of URIs.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that equals `byte`, exactly: the
/// per-byte sums never carry into the next byte.
#[inline(always)]
fn eq_mask(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    !(((x & !HIGHS) + !HIGHS) | x) & HIGHS
}

/// The words of `bytes`, little-endian, the last one padded with zeros.
#[inline(always)]
fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder().len();
    let last = (tail > 0).then(|| match bytes.len() {
        // The last eight bytes, shifted down past those already read: the
        // tail in the low bytes, zeros above (no copy of a variable length).
        8.. => word(&bytes[bytes.len() - 8..]) >> (8 * (8 - tail)),
        _ => short_word(bytes),
    });
    chunks.map(word).chain(last)
}

/// Eight bytes as a little-endian word.
#[inline(always)]
fn word(eight: &[u8]) -> u64 {
    u64::from_le_bytes(eight.try_into().unwrap_or([0; 8]))
}

/// One to seven bytes as a little-endian word padded with zeros: from two
/// overlapping halves (or three single bytes) ORed, where a byte read twice
/// lands on itself.
#[inline(always)]
fn short_word(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!((1..8).contains(&n));
    let at = |i: usize| u64::from(bytes[i]) << (8 * i);
    if n >= 4 {
        let half = |i: usize| {
            u64::from(u32::from_le_bytes(
                bytes[i..i + 4].try_into().unwrap_or([0; 4]),
            ))
        };
        half(0) | half(n - 4) << (8 * (n - 4))
    } else {
        at(0) | at(n / 2) | at(n - 1)
    }
}

/// Whether ASCII `bytes` hold a letter `A`–`Z`. Bytes above 0x7F must not occur.
#[inline]
pub fn has_ascii_uppercase(bytes: &[u8]) -> bool {
    debug_assert!(bytes.is_ascii());
    // For b <= 0x7F: b + 0x3F has its high bit set iff b >= 'A', and
    // b + 0x25 iff b > 'Z'; neither sum reaches 0x100.
    words(bytes).any(|w| (w + 0x3F * ONES) & !(w + 0x25 * ONES) & HIGHS != 0)
}

/// Whether `bytes` hold a `/` immediately followed by a `.`.
#[inline]
pub fn has_slash_dot(bytes: &[u8]) -> bool {
    find_pair(bytes, b'/', b'.').is_some()
}

/// Where `bytes` first hold `first` immediately followed by `second`
/// (neither of them 0), like `bytes.windows(2).position(|w| w == [first, second])`.
#[inline]
pub fn find_pair(bytes: &[u8], first: u8, second: u8) -> Option<usize> {
    debug_assert!(first != 0 && second != 0, "the padding is zeros");
    let mut carry = 0;
    for (i, w) in words(bytes).enumerate() {
        let firsts = eq_mask(w, first);
        // Little-endian: the byte after byte i sits 8 bits higher; a pair
        // across two words has its second byte at bit 7 of the later one.
        let pairs = ((firsts << 8) | carry) & eq_mask(w, second);
        if pairs != 0 {
            return Some(i * 8 + pairs.trailing_zeros() as usize / 8 - 1);
        }
        carry = firsts >> 56;
    }
    None
}

/// Whether `bytes` hold `a` or `b` (neither of them 0), like
/// `bytes.iter().any(|&x| x == a || x == b)`: for short strings, cheaper
/// than `memchr2`'s set-up.
#[inline]
pub fn has_either(bytes: &[u8], a: u8, b: u8) -> bool {
    debug_assert!(a != 0 && b != 0, "the padding is zeros");
    words(bytes).any(|w| eq_mask(w, a) | eq_mask(w, b) != 0)
}

/// Where `needle` first stands in `haystack`, ASCII case aside.
pub fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    match needle.first() {
        // A first byte without case is found by memchr, not tried everywhere.
        Some(&first) if !first.is_ascii_alphabetic() => {
            memchr::memchr_iter(first, haystack).find(|&at| {
                haystack
                    .get(at..at + needle.len())
                    .is_some_and(|w| w.eq_ignore_ascii_case(needle))
            })
        }
        _ => haystack
            .windows(needle.len())
            .position(|w| w.eq_ignore_ascii_case(needle)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn has_either_agrees_with_a_naive_search(bytes in prop::collection::vec(1u8..=127, 0..40)) {
            let naive = bytes.iter().any(|&x| x == b';' || x == b'(');
            prop_assert_eq!(has_either(&bytes, b';', b'('), naive);
        }

        #[test]
        fn find_ignore_case_agrees_with_a_naive_search(haystack in "[a-zA-Z;=/.]{0,40}", needle in prop::sample::select(vec![";jsessionid=", ".aspx", "sid=", ";"])) {
            let naive = haystack
                .to_ascii_lowercase()
                .find(&needle.to_ascii_lowercase());
            prop_assert_eq!(find_ignore_case(haystack.as_bytes(), needle.as_bytes()), naive);
        }
    }

    /// Every length up to 40 and every offset, against the naive versions.
    #[test]
    fn agrees_with_the_naive_versions() {
        let alphabet = b"/.aZA@z[`0";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 41) as usize;
            let offset = (state >> 8) as usize % 8;
            let mut buf = vec![b'x'; offset + len];
            for (i, b) in buf[offset..].iter_mut().enumerate() {
                *b = alphabet[((state >> (i % 50)) as usize + i * 7) % alphabet.len()];
            }
            let s = &buf[offset..];
            assert_eq!(
                has_ascii_uppercase(s),
                s.iter().any(u8::is_ascii_uppercase),
                "{s:?}"
            );
            assert_eq!(has_slash_dot(s), s.windows(2).any(|w| w == b"/."), "{s:?}");
            for (a, b) in [(b'/', b'/'), (b'/', b'.'), (b'.', b'/'), (b'a', b'Z')] {
                let naive = s.windows(2).position(|w| w == [a, b]);
                assert_eq!(find_pair(s, a, b), naive, "{s:?}");
            }
        }
    }

    /// Every length up to 24: the words are the bytes, zero-padded.
    #[test]
    fn words_are_the_bytes_padded_with_zeros() {
        let bytes: Vec<u8> = (1..=24).collect();
        for len in 0..=24 {
            let s = &bytes[..len];
            let naive: Vec<u64> = s
                .chunks(8)
                .map(|c| {
                    let mut padded = [0u8; 8];
                    padded[..c.len()].copy_from_slice(c);
                    u64::from_le_bytes(padded)
                })
                .collect();
            assert_eq!(words(s).collect::<Vec<_>>(), naive, "{len}");
        }
    }

    #[test]
    fn every_ascii_byte_and_every_pair_position() {
        for b in 0..=0x7Fu8 {
            for pos in 0..16 {
                let mut s = vec![b'x'; 16];
                s[pos] = b;
                assert_eq!(
                    has_ascii_uppercase(&s),
                    b.is_ascii_uppercase(),
                    "{b:#x} at {pos}"
                );
            }
        }
        for pos in 0..23 {
            let mut s = vec![b'a'; 24];
            s[pos] = b'/';
            s[pos + 1] = b'.';
            assert!(has_slash_dot(&s), "at {pos}");
            s[pos + 1] = b'a';
            assert!(!has_slash_dot(&s), "at {pos}");
        }
    }
}
