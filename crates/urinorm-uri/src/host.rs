//! IP literal hosts: the strict text forms of RFC 3986 §3.2.2 in, RFC 5952 text out.
//!
//! These parsers accept exactly the `IPv4address` and `IPv6address` rules of
//! Appendix A: no leading zeros in a `dec-octet`, no zone identifiers, at most
//! one `::`, an embedded IPv4 address only in the last 32 bits. Beside
//! them, the numeric forms RFC 3986 §7.4 warns of (`0x7f.1`, `2130706433`),
//! which are reg-names to the RFC and addresses to many resolvers: read
//! only where a protocol transform asks (`ipv4-numeric`).

use crate::table::{HEXDIG, IPVFUTURE_TAIL, hex_value};

/// Parses `IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet`.
///
/// ```
/// assert_eq!(urinorm_uri::host::parse_ipv4(b"192.0.2.1"), Some([192, 0, 2, 1]));
/// assert_eq!(urinorm_uri::host::parse_ipv4(b"192.0.2.01"), None); // leading zero
/// assert_eq!(urinorm_uri::host::parse_ipv4(b"256.0.0.1"), None);
/// ```
pub fn parse_ipv4(text: &[u8]) -> Option<[u8; 4]> {
    let mut octets = [0u8; 4];
    let mut parts = text.split(|&b| b == b'.');
    for octet in &mut octets {
        *octet = parse_dec_octet(parts.next()?)?;
    }
    parts.next().is_none().then_some(octets)
}

/// `dec-octet`: 0–255 in decimal, with no leading zero (§3.2.2).
fn parse_dec_octet(digits: &[u8]) -> Option<u8> {
    if digits.is_empty() || digits.len() > 3 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let mut value = 0u16;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u16::from(d - b'0');
    }
    u8::try_from(value).ok()
}

/// Parses the `IPv6address` rule of §3.2.2 into its eight 16-bit pieces.
///
/// ```
/// use urinorm_uri::host::parse_ipv6;
/// assert_eq!(parse_ipv6(b"::1"), Some([0, 0, 0, 0, 0, 0, 0, 1]));
/// assert_eq!(parse_ipv6(b"::ffff:192.0.2.1"), Some([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201]));
/// assert_eq!(parse_ipv6(b"1:2:3:4:5:6:7:8:9"), None);
/// ```
pub fn parse_ipv6(text: &[u8]) -> Option<[u16; 8]> {
    let mut pieces = [0u16; 8];
    let mut count = 0;
    // Where the `::` stands, counted in pieces before it.
    let mut gap = None;
    let mut i = 0;
    if text.starts_with(b"::") {
        gap = Some(0);
        i = 2;
    }
    while i < text.len() {
        let start = i;
        let mut value = 0u32;
        while i < text.len() && i - start < 4 && HEXDIG.allows(text[i]) {
            value = value * 16 + u32::from(hex_value(text[i]).unwrap_or(0));
            i += 1;
        }
        if text.get(i) == Some(&b'.') {
            // `ls32` as an IPv4address: the last 32 bits, and nothing after it.
            if count > 6 {
                return None;
            }
            let [a, b, c, d] = parse_ipv4(&text[start..])?;
            pieces[count] = u16::from_be_bytes([a, b]);
            pieces[count + 1] = u16::from_be_bytes([c, d]);
            count += 2;
            break;
        }
        if i == start || count == 8 {
            return None;
        }
        pieces[count] = value as u16;
        count += 1;
        if i == text.len() {
            break;
        }
        if text[i] != b':' {
            return None;
        }
        i += 1;
        if text.get(i) == Some(&b':') {
            if gap.is_some() {
                return None;
            }
            gap = Some(count);
            i += 1;
        } else if i == text.len() {
            return None;
        }
    }
    match gap {
        None if count == 8 => Some(pieces),
        // `::` stands for at least one piece of zeros.
        Some(at) if count <= 7 => {
            let moved = count - at;
            pieces.copy_within(at..count, 8 - moved);
            pieces[at..8 - moved].fill(0);
            Some(pieces)
        }
        _ => None,
    }
}

/// Checks `IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )` (§3.2.2).
///
/// ```
/// assert!(urinorm_uri::host::is_ipvfuture(b"v7.fe80::1+eth0"));
/// assert!(!urinorm_uri::host::is_ipvfuture(b"v.x"));
/// ```
pub fn is_ipvfuture(text: &[u8]) -> bool {
    let Some((&first, rest)) = text.split_first() else {
        return false;
    };
    if !first.eq_ignore_ascii_case(&b'v') {
        return false;
    }
    let Some(dot) = rest.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (version, tail) = (&rest[..dot], &rest[dot + 1..]);
    !version.is_empty()
        && version.iter().all(|&b| HEXDIG.allows(b))
        && !tail.is_empty()
        && tail.iter().all(|&b| IPVFUTURE_TAIL.allows(b))
}

/// Writes an IPv6 address in the canonical text of RFC 5952 §4: lower-case
/// hex without leading zeros, the longest run of two or more zero pieces as
/// `::` (the first such run on a tie), and (§5) the last 32 bits in dotted
/// decimal for the prefixes that embed an IPv4 address: IPv4-mapped
/// `::ffff:0:0/96`, IPv4-translated `::ffff:0:0:0/96` and the NAT64
/// well-known prefix `64:ff9b::/96` (RFC 6052).
///
/// ```
/// let mut out = Vec::new();
/// urinorm_uri::host::write_ipv6(&[0x2001, 0xdb8, 0, 0, 1, 0, 0, 1], &mut out);
/// assert_eq!(out, b"2001:db8::1:0:0:1");
/// out.clear();
/// urinorm_uri::host::write_ipv6(&[0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0280], &mut out);
/// assert_eq!(out, b"::ffff:192.0.2.128");
/// ```
pub fn write_ipv6(pieces: &[u16; 8], out: &mut Vec<u8>) {
    let embeds_ipv4 = matches!(
        pieces,
        [0, 0, 0, 0, 0, 0xffff, _, _]
            | [0, 0, 0, 0, 0xffff, 0, _, _]
            | [0x64, 0xff9b, 0, 0, 0, 0, _, _]
    );
    if !embeds_ipv4 {
        write_compressed(pieces, out);
        return;
    }
    write_compressed(&pieces[..6], out);
    if out.last() != Some(&b':') {
        out.push(b':');
    }
    let [a, b] = pieces[6].to_be_bytes();
    let [c, d] = pieces[7].to_be_bytes();
    for (i, octet) in [a, b, c, d].into_iter().enumerate() {
        if i > 0 {
            out.push(b'.');
        }
        push_decimal(octet, out);
    }
}

/// Writes `value` in decimal, without allocating.
fn push_decimal(value: u8, out: &mut Vec<u8>) {
    if value >= 100 {
        out.push(b'0' + value / 100);
    }
    if value >= 10 {
        out.push(b'0' + value / 10 % 10);
    }
    out.push(b'0' + value % 10);
}

/// Writes `value` in lower-case hex without leading zeros, without allocating.
fn push_hex(value: u16, out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let width = (4 - value.leading_zeros() as usize / 4).max(1);
    for shift in (0..width).rev() {
        out.push(DIGITS[usize::from(value >> (shift * 4)) & 0xf]);
    }
}

/// Writes hex pieces with the longest zero run (two or more) as `::`.
fn write_compressed(pieces: &[u16], out: &mut Vec<u8>) {
    let (mut best, mut run_start, mut run) = ((0, 0), 0, 0);
    for (i, &piece) in pieces.iter().enumerate() {
        if piece == 0 {
            if run == 0 {
                run_start = i;
            }
            run += 1;
            if run > best.1 {
                best = (run_start, run);
            }
        } else {
            run = 0;
        }
    }
    let (gap_start, gap_len) = if best.1 >= 2 { best } else { (pieces.len(), 0) };
    for (i, piece) in pieces.iter().enumerate() {
        if i == gap_start {
            out.extend_from_slice(b"::");
        } else if i > gap_start && i < gap_start + gap_len {
            continue;
        } else {
            if i > 0 && i != gap_start + gap_len {
                out.push(b':');
            }
            push_hex(*piece, out);
        }
    }
}

/// Parses the numeric forms of §7.4 into an address: one to four parts,
/// an optional trailing dot, every part a number.
///
/// ```
/// use urinorm_uri::host::parse_numeric_ipv4;
/// assert_eq!(parse_numeric_ipv4(b"0x7f.1"), Some(0x7f00_0001));
/// assert_eq!(parse_numeric_ipv4(b"2130706433"), Some(0x7f00_0001));
/// assert_eq!(parse_numeric_ipv4(b"017700000001"), Some(0x7f00_0001));
/// assert_eq!(parse_numeric_ipv4(b"1.2.3.256"), None);
/// assert_eq!(parse_numeric_ipv4(b"example.com"), None);
/// ```
pub fn parse_numeric_ipv4(host: &[u8]) -> Option<u32> {
    // Every part, so the first, starts with a digit (`0x…`, `0…` or decimal).
    host.first()
        .is_some_and(u8::is_ascii_digit)
        .then(|| address_of_parts(host))
        .flatten()
}

/// [`parse_numeric_ipv4`] without its first test.
fn address_of_parts(host: &[u8]) -> Option<u32> {
    let host = host.strip_suffix(b".").unwrap_or(host);
    let mut values = [0u64; 4];
    let mut count = 0;
    for part in host.split(|&b| b == b'.') {
        if count == 4 || part.is_empty() {
            return None;
        }
        values[count] = parse_number(part)?;
        count += 1;
    }
    let (last, leading) = values[..count].split_last()?;
    let mut address: u64 = 0;
    for &v in leading {
        if v > 255 {
            return None;
        }
        address = address << 8 | v;
    }
    let remaining_bits = 8 * (4 - leading.len() as u32);
    if *last >= 1u64 << remaining_bits {
        return None;
    }
    Some((address << remaining_bits | last) as u32)
}

/// One part: `0x…` hex, `0…` octal, or decimal; `None` if not a number or
/// too large to matter.
fn parse_number(part: &[u8]) -> Option<u64> {
    let (digits, radix) =
        if part.len() >= 2 && part[0] == b'0' && part[1].eq_ignore_ascii_case(&b'x') {
            (&part[2..], 16)
        } else if part.len() > 1 && part[0] == b'0' {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        // "0x" alone is zero; "" (an empty part) is not a number.
        return (radix == 16).then_some(0);
    }
    let mut value: u64 = 0;
    for &d in digits {
        let digit = (d as char).to_digit(radix)?;
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(digit))?;
        if value > u64::from(u32::MAX) {
            return None;
        }
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_numeric_ipv4_shortcut_rejects_no_address(host in "[0-9a-fA-FxX.]{0,12}") {
            prop_assert_eq!(parse_numeric_ipv4(host.as_bytes()), address_of_parts(host.as_bytes()));
        }
    }

    #[test]
    fn ipv6_forms_of_the_abnf() {
        let valid: &[(&str, [u16; 8])] = &[
            ("1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]),
            ("::", [0; 8]),
            ("::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]),
            ("1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]),
            ("1::8", [1, 0, 0, 0, 0, 0, 0, 8]),
            ("1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]),
            ("::1.2.3.4", [0, 0, 0, 0, 0, 0, 0x0102, 0x0304]),
            ("1:2:3:4:5::1.2.3.4", [1, 2, 3, 4, 5, 0, 0x0102, 0x0304]),
            ("FFFF::abcd", [0xffff, 0, 0, 0, 0, 0, 0, 0xabcd]),
        ];
        for (text, pieces) in valid {
            assert_eq!(parse_ipv6(text.as_bytes()), Some(*pieces), "{text}");
        }
        let invalid = [
            "",
            ":",
            ":::",
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "1:2:3:4:5:6:7:8::",
            "::1:2:3:4:5:6:7:8",
            "1::2::3",
            "12345::",
            "1:",
            ":1::",
            "1:2:3:4:5:6::1.2.3.4",
            "1.2.3.4",
            "::1.2.3.4:5",
            "::1.2.3.04",
            "::256.1.1.1",
            "fe80::1%eth0",
            "g::",
        ];
        for text in invalid {
            assert_eq!(parse_ipv6(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn rfc_5952_text() {
        let cases: &[(&str, &str)] = &[
            ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
            ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
            ("2001:db8::0:1", "2001:db8::1"),
            ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
            ("2001:db8:0:0:1:0:0:0", "2001:db8:0:0:1::"),
            ("0:0:0:0:0:0:0:0", "::"),
            ("0:0:0:0:0:0:0:1", "::1"),
            ("1:0:0:0:0:0:0:0", "1::"),
            ("2001:DB8::AbCd", "2001:db8::abcd"),
            ("::ffff:192.0.2.1", "::ffff:192.0.2.1"),
            ("::ffff:c000:201", "::ffff:192.0.2.1"),
            ("::ffff:0:c000:201", "::ffff:0:192.0.2.1"),
            ("64:ff9b::c000:201", "64:ff9b::192.0.2.1"),
            ("::192.0.2.1", "::c000:201"),
            ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
        ];
        for (text, canonical) in cases {
            let pieces = parse_ipv6(text.as_bytes()).unwrap();
            let mut out = Vec::new();
            write_ipv6(&pieces, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), *canonical, "{text}");
            assert_eq!(parse_ipv6(canonical.as_bytes()), Some(pieces));
        }
    }

    #[test]
    fn dec_octet_bounds() {
        assert_eq!(parse_ipv4(b"0.0.0.0"), Some([0; 4]));
        assert_eq!(parse_ipv4(b"255.255.255.255"), Some([255; 4]));
        for bad in [
            "1.2.3",
            "1.2.3.4.5",
            "1..2.3",
            "00.1.1.1",
            "1.2.3.4.",
            "1.2.3.1000",
            "a.b.c.d",
        ] {
            assert_eq!(parse_ipv4(bad.as_bytes()), None, "{bad}");
        }
    }
}
