//! The syntax rung (RFC 3986 §6.2.2): case, percent-encoding and dot segments,
//! the same for every scheme.

use memchr::memchr;

use super::{Changes, Rule};
use crate::host::write_ipv6;
use crate::table::{HEX_UPPER, UNRESERVED, hex_value};
use crate::uri::HostKind;

/// Appends `bytes` with §6.2.2.1 and §6.2.2.2 applied: every `%XX` with
/// upper-case hex, and decoded where it encodes an unreserved character (§2.3).
/// With `lowercase`, letters are lower-cased too (a host, §3.2.2), the decoded
/// ones included, the hex digits of a kept `%XX` not.
///
/// `bytes` must be valid for its component: every `%` starts a triplet.
pub fn push_percent_normalized(
    out: &mut Vec<u8>,
    bytes: &[u8],
    lowercase: bool,
    changes: &mut Changes,
) {
    let mut rest = bytes;
    loop {
        let run_end = memchr(b'%', rest).unwrap_or(rest.len());
        push_run(out, &rest[..run_end], lowercase, changes);
        if run_end == rest.len() {
            return;
        }
        match Triplet::normalized(&rest[run_end..run_end + 3], changes) {
            Triplet::Decoded(value) if lowercase => out.push(value.to_ascii_lowercase()),
            Triplet::Decoded(value) => out.push(value),
            Triplet::Kept(upper) => out.extend_from_slice(&upper),
        }
        rest = &rest[run_end + 3..];
    }
}

/// [`push_percent_normalized`] in place: the component at `buf[read..end]`
/// is written from `write` on (`write <= read`, so nothing is read after
/// it is overwritten: a triplet is read whole before its 1 or 3 bytes are
/// written); returns where it ends.
pub(crate) fn percent_normalize_within(
    buf: &mut [u8],
    mut read: usize,
    end: usize,
    mut write: usize,
    changes: &mut Changes,
) -> usize {
    debug_assert!(write <= read && read <= end);
    while let Some(n) = memchr(b'%', &buf[read..end]) {
        if write != read {
            buf.copy_within(read..read + n, write);
        }
        write += n;
        read += n;
        let triplet: [u8; 3] = buf[read..read + 3].try_into().expect("a triplet");
        match Triplet::normalized(&triplet, changes) {
            Triplet::Decoded(value) => {
                buf[write] = value;
                write += 1;
            }
            Triplet::Kept(upper) => {
                buf[write..write + 3].copy_from_slice(&upper);
                write += 3;
            }
        }
        read += 3;
    }
    if write != read {
        buf.copy_within(read..end, write);
    }
    write + (end - read)
}

/// A `%XX` triplet as §6.2.2.1 and §6.2.2.2 write it.
enum Triplet {
    /// It encodes an unreserved character (§2.3): the character.
    Decoded(u8),
    /// Any other octet stays encoded, its hex digits upper case.
    Kept([u8; 3]),
}

impl Triplet {
    /// The triplet's normal form, noting the rule that changed it.
    fn normalized(triplet: &[u8], changes: &mut Changes) -> Triplet {
        let (hi, lo) = (hex_digit(triplet[1]), hex_digit(triplet[2]));
        let value = hi << 4 | lo;
        if UNRESERVED.allows(value) {
            changes.add(Rule::DecodeUnreserved);
            return Triplet::Decoded(value);
        }
        let upper = [b'%', HEX_UPPER[usize::from(hi)], HEX_UPPER[usize::from(lo)]];
        if upper != triplet {
            changes.add(Rule::UppercasePercentHex);
        }
        Triplet::Kept(upper)
    }
}

/// Decodes, in place in `out[start..]`, each `%XX` triplet whose value
/// `decode` accepts; says whether any was decoded. Shared by the scheme
/// rung (UTF-8 in a host) and the protocol rung (`decode-safe`).
pub fn decode_triplets(out: &mut Vec<u8>, start: usize, decode: impl Fn(u8) -> bool) -> bool {
    let end = out.len();
    // Bytes before the first `%` stay where they are.
    let Some(first) = memchr::memchr(b'%', &out[start..]) else {
        return false;
    };
    let (mut read, mut write) = (start + first, start + first);
    while read < end {
        let value = match out.get(read..read + 3) {
            Some([b'%', hi, lo]) => hex_value(*hi).zip(hex_value(*lo)).map(|(h, l)| h << 4 | l),
            _ => None,
        };
        match value.filter(|&v| decode(v)) {
            Some(v) => {
                out[write] = v;
                read += 3;
            }
            None => {
                out[write] = out[read];
                read += 1;
            }
        }
        write += 1;
    }
    out.truncate(write);
    write != end
}

/// A hex digit's value; the parser has checked that it is one.
fn hex_digit(byte: u8) -> u8 {
    debug_assert!(byte.is_ascii_hexdigit());
    hex_value(byte).unwrap_or(0)
}

/// Appends a run without `%`, lower-casing it for a host.
fn push_run(out: &mut Vec<u8>, run: &[u8], lowercase: bool, changes: &mut Changes) {
    let start = out.len();
    out.extend_from_slice(run);
    if lowercase && crate::swar::has_ascii_uppercase(run) {
        changes.add(Rule::LowercaseHost);
        out[start..].make_ascii_lowercase();
    }
}

/// Appends the host in its syntax-rung form: a reg-name lower-cased and
/// percent-normalized (decoding first, so `%41` becomes `a`); an IPv4 address
/// as is (the strict rule admits one spelling); an IPv6 literal in RFC 5952
/// text; an IPvFuture lower-cased. An IP literal names the same address under
/// every scheme, so its form is not the scheme's to define.
pub fn push_host(
    out: &mut Vec<u8>,
    host: &str,
    kind: HostKind,
    has_percent: bool,
    changes: &mut Changes,
) {
    match kind {
        HostKind::RegName if has_percent => {
            push_percent_normalized(out, host.as_bytes(), true, changes)
        }
        HostKind::RegName => push_run(out, host.as_bytes(), true, changes),
        HostKind::Ipv4(_) => out.extend_from_slice(host.as_bytes()),
        HostKind::Ipv6(pieces) => {
            let start = out.len();
            out.push(b'[');
            write_ipv6(&pieces, out);
            out.push(b']');
            if out[start..] != *host.as_bytes() {
                changes.add(Rule::Ipv6Text);
            }
        }
        HostKind::IpvFuture => {
            let start = out.len();
            out.extend_from_slice(host.as_bytes());
            if host.bytes().any(|b| b.is_ascii_uppercase()) {
                changes.add(Rule::LowercaseIpvFuture);
                out[start..].make_ascii_lowercase();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(bytes: &str, lowercase: bool) -> (String, Changes) {
        let mut out = Vec::new();
        let mut changes = Changes::default();
        push_percent_normalized(&mut out, bytes.as_bytes(), lowercase, &mut changes);
        (String::from_utf8(out).unwrap(), changes)
    }

    #[test]
    fn decodes_only_unreserved_and_uppercases_the_rest() {
        assert_eq!(normalized("%7e%41%2f%2F%25%3d", false).0, "~A%2F%2F%25%3D");
        assert_eq!(normalized("AB%41%c3%a9", true).0, "aba%C3%A9");
        assert!(normalized("abc", false).1.is_empty());
        assert!(normalized("a%2Fb", false).1.is_empty());
        assert!(
            normalized("a%2fb", false)
                .1
                .contains(Rule::UppercasePercentHex)
        );
    }

    /// Every reserved character, encoded, stays encoded (§2.2, §6.2.2.2).
    #[test]
    fn never_decodes_a_reserved_character() {
        for &b in b":/?#[]@!$&'()*+,;=%" {
            let encoded = format!("%{b:02x}");
            assert_eq!(normalized(&encoded, false).0, encoded.to_uppercase());
        }
    }
}
