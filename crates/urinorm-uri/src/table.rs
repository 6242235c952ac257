//! The character classes of RFC 3986 §2 and Appendix A as `const` byte tables.
//!
//! Each table answers "may this byte stand here, as itself?" in one load.
//! `%` is in none of them: percent-encodings are checked by the scanner, which
//! needs the two bytes that follow.
//!
//! It knows characters, nothing of components' order: that is the parser's.

/// A set of bytes, one flag per byte value.
#[derive(Clone, Copy)]
pub struct Table([bool; 256]);

impl Table {
    /// The set holding exactly `bytes`.
    pub const fn of(bytes: &[u8]) -> Table {
        let mut set = [false; 256];
        let mut i = 0;
        while i < bytes.len() {
            set[bytes[i] as usize] = true;
            i += 1;
        }
        Table(set)
    }

    /// The set of the bytes in `lo..=hi`.
    const fn range(lo: u8, hi: u8) -> Table {
        let mut set = [false; 256];
        let mut b = lo as usize;
        while b <= hi as usize {
            set[b] = true;
            b += 1;
        }
        Table(set)
    }

    /// The union of two sets.
    pub const fn or(self, other: Table) -> Table {
        let mut set = self.0;
        let mut i = 0;
        while i < 256 {
            set[i] |= other.0[i];
            i += 1;
        }
        Table(set)
    }

    /// Whether `byte` is in the set.
    #[inline(always)]
    pub const fn allows(&self, byte: u8) -> bool {
        self.0[byte as usize]
    }
}

/// `ALPHA = %x41-5A / %x61-7A`
pub const ALPHA: Table = Table::range(b'A', b'Z').or(Table::range(b'a', b'z'));
/// `DIGIT = %x30-39`
pub const DIGIT: Table = Table::range(b'0', b'9');
/// `HEXDIG = DIGIT / "A" / "B" / "C" / "D" / "E" / "F"` (case-insensitive, RFC 5234 §2.3)
pub const HEXDIG: Table = DIGIT
    .or(Table::range(b'A', b'F'))
    .or(Table::range(b'a', b'f'));
/// `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"` (§2.3)
pub const UNRESERVED: Table = ALPHA.or(DIGIT).or(Table::of(b"-._~"));
/// `sub-delims = "!" / "$" / "&" / "'" / "(" / ")" / "*" / "+" / "," / ";" / "="` (§2.2)
pub const SUB_DELIMS: Table = Table::of(b"!$&'()*+,;=");
/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (§3.1), the bytes after the first
pub const SCHEME: Table = ALPHA.or(DIGIT).or(Table::of(b"+-."));
/// `userinfo = *( unreserved / pct-encoded / sub-delims / ":" )` (§3.2.1)
pub const USERINFO: Table = UNRESERVED.or(SUB_DELIMS).or(Table::of(b":"));
/// `reg-name = *( unreserved / pct-encoded / sub-delims )` (§3.2.2)
pub const REG_NAME: Table = UNRESERVED.or(SUB_DELIMS);
/// `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )` (§3.2.2), the tail
pub const IPVFUTURE_TAIL: Table = UNRESERVED.or(SUB_DELIMS).or(Table::of(b":"));
/// `pchar = unreserved / pct-encoded / sub-delims / ":" / "@"` (§3.3)
pub const PCHAR: Table = UNRESERVED.or(SUB_DELIMS).or(Table::of(b":@"));
/// `path = *( pchar / "/" )`: every path rule of §3.3 draws from these bytes
pub const PATH: Table = PCHAR.or(Table::of(b"/"));
/// `query = *( pchar / "/" / "?" )` (§3.4); `fragment` is the same set (§3.5)
pub const QUERY: Table = PCHAR.or(Table::of(b"/?"));

/// The value of a hex digit, or `None`.
#[inline(always)]
pub const fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        _ => None,
    }
}

/// Upper-case hex digits, for writing `%XX` (§2.1: producers should use upper case).
pub const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables against the character lists of §2, byte by byte.
    #[test]
    fn tables_match_section_2() {
        let gen_delims = b":/?#[]@";
        let sub_delims = b"!$&'()*+,;=";
        for b in 0..=255u8 {
            let unreserved = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
            assert_eq!(UNRESERVED.allows(b), unreserved, "{b:#x}");
            assert_eq!(SUB_DELIMS.allows(b), sub_delims.contains(&b), "{b:#x}");
            assert_eq!(
                PCHAR.allows(b),
                unreserved || sub_delims.contains(&b) || b == b':' || b == b'@'
            );
            assert_eq!(HEXDIG.allows(b), b.is_ascii_hexdigit());
            assert_eq!(hex_value(b).is_some(), b.is_ascii_hexdigit());
            // No table admits a byte outside the URI character set.
            if QUERY.allows(b) || USERINFO.allows(b) {
                assert!(unreserved || sub_delims.contains(&b) || gen_delims.contains(&b));
            }
            assert!(!QUERY.allows(b'%') && !QUERY.allows(b'#'));
        }
    }
}
