//! Runs of a byte class found sixteen bytes at a time, for the parser's
//! scans: a path or query is a long run of allowed bytes, and testing them
//! one table lookup at a time is most of what parsing costs.
//!
//! A [`Class`] keeps its [`Table`] and the same set as two 16-byte nibble
//! tables (the "shufti" method): byte `b` is in the set when
//! `LOW[b & 15] & HIGH[b >> 4]` is not zero, so one shuffle of each table
//! classifies sixteen bytes (SSSE3, found at run time; otherwise, and for
//! fewer than sixteen bytes, the table eight bytes at a time). Tested
//! against the table itself, byte by byte.
//!
//! It knows bytes and tables, nothing of URIs.

use crate::table::Table;

/// A set of ASCII bytes, in the forms its scans need.
pub(crate) struct Class {
    table: Table,
    /// By low nibble: bit `h` set when the byte `h << 4 | low` is in the set.
    low: [u8; 16],
    /// By high nibble: `1 << h` for `h` below 8; 0 above (bytes past 0x7F).
    high: [u8; 16],
}

impl Class {
    /// The class of the bytes `table` allows, which must all be ASCII
    /// (checked when the constant is made).
    pub(crate) const fn new(table: Table) -> Class {
        let mut low = [0u8; 16];
        let mut high = [0u8; 16];
        let mut b = 0;
        while b < 256 {
            if table.allows(b as u8) {
                assert!(b < 0x80, "a class holds ASCII bytes only");
                low[b & 15] |= 1 << (b >> 4);
            }
            b += 1;
        }
        let mut h = 0;
        while h < 8 {
            high[h] = 1 << h;
            h += 1;
        }
        Class { table, low, high }
    }

    /// How many bytes from the start of `bytes` are in the class.
    #[inline(always)]
    pub(crate) fn run_len(&self, bytes: &[u8]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if bytes.len() >= 16 && std::arch::is_x86_feature_detected!("ssse3") {
            // SAFETY: the CPU has SSSE3 and `bytes` holds sixteen bytes or
            // more, as just checked.
            return unsafe { self.run_len_ssse3(bytes) };
        }
        self.run_len_by_table(bytes)
    }

    /// [`Class::run_len`] with the table: eight lookups ANDed while all eight
    /// pass (one branch), then one by one.
    #[inline(always)]
    fn run_len_by_table(&self, bytes: &[u8]) -> usize {
        let mut n = 0;
        for group in bytes.chunks_exact(8) {
            if !group
                .iter()
                .fold(true, |all, &b| all & self.table.allows(b))
            {
                break;
            }
            n += 8;
        }
        n + bytes[n..]
            .iter()
            .position(|&b| !self.table.allows(b))
            .unwrap_or(bytes.len() - n)
    }

    /// [`Class::run_len`] sixteen bytes at a time; `bytes` holds at least
    /// sixteen. The last block is the last sixteen bytes, overlapping the
    /// ones already passed, whose bits are shifted out.
    ///
    /// # Safety
    ///
    /// The CPU has SSSE3 (`is_x86_feature_detected!("ssse3")`), and `bytes`
    /// holds at least sixteen bytes: the last block is read from
    /// `len - 16`.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "ssse3")]
    #[inline]
    unsafe fn run_len_ssse3(&self, bytes: &[u8]) -> usize {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128};
        debug_assert!(bytes.len() >= 16);
        // SAFETY: for every load below, `_mm_loadu_si128` reads 16 bytes
        // with no alignment needed; each block starts at most `len - 16`
        // bytes in.
        let load = |at: usize| unsafe { _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>()) };
        let mut at = 0;
        while at + 16 <= bytes.len() {
            let outside = self.outside_ssse3(load(at));
            if outside != 0 {
                return at + outside.trailing_zeros() as usize;
            }
            at += 16;
        }
        if at == bytes.len() {
            return at;
        }
        let last = bytes.len() - 16;
        let outside = self.outside_ssse3(load(last)) >> (at - last);
        match outside {
            0 => bytes.len(),
            _ => at + outside.trailing_zeros() as usize,
        }
    }

    /// A bit for each of the sixteen bytes of `block` not in the class.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "ssse3")]
    #[inline]
    fn outside_ssse3(&self, block: std::arch::x86_64::__m128i) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: the tables are 16 bytes; unaligned loads need no more.
        let (low, high) = unsafe {
            (
                _mm_loadu_si128(self.low.as_ptr().cast::<__m128i>()),
                _mm_loadu_si128(self.high.as_ptr().cast::<__m128i>()),
            )
        };
        let nibble = _mm_set1_epi8(0x0f);
        // A shuffle index with its top bit set gives 0: the low nibble is
        // masked to 0..15, and high nibbles 8..15 (bytes past 0x7F) find 0.
        let by_low = _mm_shuffle_epi8(low, _mm_and_si128(block, nibble));
        let by_high = _mm_shuffle_epi8(high, _mm_and_si128(_mm_srli_epi16(block, 4), nibble));
        let outside = _mm_cmpeq_epi8(_mm_and_si128(by_low, by_high), _mm_setzero_si128());
        _mm_movemask_epi8(outside) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{PATH, QUERY, REG_NAME, USERINFO};
    use proptest::prelude::*;

    const CLASSES: [(&str, Class); 4] = [
        ("path", Class::new(PATH)),
        ("query", Class::new(QUERY)),
        ("reg-name", Class::new(REG_NAME)),
        ("userinfo", Class::new(USERINFO)),
    ];

    /// The oracle: the table, one byte at a time.
    fn naive(table: &Table, bytes: &[u8]) -> usize {
        bytes
            .iter()
            .position(|&b| !table.allows(b))
            .unwrap_or(bytes.len())
    }

    #[test]
    fn every_byte_at_every_place_of_a_block_agrees_with_the_table() {
        for (name, class) in &CLASSES {
            for len in [16, 17, 31, 32, 40] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut bytes = vec![b'a'; len];
                        bytes[at] = b;
                        let expected = naive(&class.table, &bytes);
                        assert_eq!(class.run_len(&bytes), expected, "{name} {len} {at} {b:#x}");
                        assert_eq!(class.run_len_by_table(&bytes), expected);
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn runs_agree_with_the_table(
            bytes in proptest::collection::vec(
                prop_oneof![4 => b'!'..=b'~', 1 => any::<u8>()], 0..100),
        ) {
            for (name, class) in &CLASSES {
                let expected = naive(&class.table, &bytes);
                prop_assert_eq!(class.run_len(&bytes), expected, "{}", name);
                prop_assert_eq!(class.run_len_by_table(&bytes), expected, "{}", name);
            }
        }
    }
}
