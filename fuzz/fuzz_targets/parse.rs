//! `parse`: arbitrary bytes → `UriRef::parse_bytes`. When the bytes are
//! accepted:
//! - they are ASCII, and `as_str` is exactly them;
//! - `recompose_into` (§5.3) gives back exactly the input bytes;
//! - the split agrees with an independent transcription of the Appendix B
//!   regex `^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`, and
//!   the accessors joined with their delimiters are the input;
//! - the authority is `[userinfo "@"] host [":" port]`, and the host kind
//!   agrees with the host's text (strict dotted IPv4, bracketed literals);
//! - `UriRef::parse` on the same text agrees with `parse_bytes`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::{HostKind, UriRef};

/// Appendix B's regex, by hand: (scheme, authority, path, query, fragment).
type Split<'a> = (
    Option<&'a [u8]>,
    Option<&'a [u8]>,
    &'a [u8],
    Option<&'a [u8]>,
    Option<&'a [u8]>,
);

fn appendix_b(s: &[u8]) -> Split<'_> {
    let mut rest = s;
    let mut scheme = None;
    if let Some(i) = rest.iter().position(|b| b":/?#".contains(b))
        && rest[i] == b':'
        && i > 0
    {
        scheme = Some(&rest[..i]);
        rest = &rest[i + 1..];
    }
    let mut authority = None;
    if let Some(after) = rest.strip_prefix(b"//") {
        let end = after
            .iter()
            .position(|b| b"/?#".contains(b))
            .unwrap_or(after.len());
        authority = Some(&after[..end]);
        rest = &after[end..];
    }
    let end = rest
        .iter()
        .position(|b| b"?#".contains(b))
        .unwrap_or(rest.len());
    let path = &rest[..end];
    rest = &rest[end..];
    let mut query = None;
    if let Some(after) = rest.strip_prefix(b"?") {
        let end = after.iter().position(|&b| b == b'#').unwrap_or(after.len());
        query = Some(&after[..end]);
        rest = &after[end..];
    }
    let fragment = rest.strip_prefix(b"#");
    (scheme, authority, path, query, fragment)
}

fuzz_target!(|data: &[u8]| {
    let Ok(uri) = UriRef::parse_bytes(data) else {
        // Text that is not UTF-8 can only be rejected; UTF-8 text must be
        // rejected by `parse` too.
        if let Ok(text) = std::str::from_utf8(data) {
            assert!(
                UriRef::parse(text).is_err(),
                "parse accepts what parse_bytes rejects"
            );
        }
        return;
    };
    assert!(data.is_ascii(), "accepted non-ASCII bytes");
    assert_eq!(uri.as_str().as_bytes(), data);

    // §5.3 recomposition gives back the bytes.
    let mut recomposed = String::new();
    uri.recompose_into(&mut recomposed);
    assert_eq!(recomposed.as_bytes(), data, "recompose_into");

    // The accessors agree with Appendix B.
    fn by(o: Option<&str>) -> Option<&[u8]> {
        o.map(str::as_bytes)
    }
    let split = (
        by(uri.scheme()),
        by(uri.authority()),
        uri.path().as_bytes(),
        by(uri.query()),
        by(uri.fragment()),
    );
    assert_eq!(split, appendix_b(data), "split differs from Appendix B");

    // Joined with their delimiters, the accessors are the input.
    let mut joined = Vec::new();
    if let Some(s) = uri.scheme() {
        joined.extend_from_slice(s.as_bytes());
        joined.push(b':');
    }
    if let Some(a) = uri.authority() {
        joined.extend_from_slice(b"//");
        joined.extend_from_slice(a.as_bytes());
    }
    joined.extend_from_slice(uri.path().as_bytes());
    if let Some(q) = uri.query() {
        joined.push(b'?');
        joined.extend_from_slice(q.as_bytes());
    }
    if let Some(f) = uri.fragment() {
        joined.push(b'#');
        joined.extend_from_slice(f.as_bytes());
    }
    assert_eq!(joined, data);

    assert_eq!(uri.is_relative(), uri.scheme().is_none());
    let without = uri.without_fragment().as_bytes();
    match uri.fragment() {
        Some(f) => assert_eq!(without.len() + 1 + f.len(), data.len()),
        None => assert_eq!(without, data),
    }
    assert!(data.starts_with(without));
    assert_eq!(
        uri.has_percent_encoding(),
        data.contains(&b'%'),
        "has_percent_encoding"
    );

    // The authority's parts.
    match uri.authority() {
        None => {
            assert!(uri.host().is_none() && uri.host_kind().is_none());
            assert!(uri.userinfo().is_none() && uri.port().is_none());
            // Without an authority the path cannot start with `//`.
            assert!(!uri.path().starts_with("//"));
        }
        Some(authority) => {
            let host = uri.host().expect("an authority has a host");
            let mut parts = String::new();
            if let Some(u) = uri.userinfo() {
                parts.push_str(u);
                parts.push('@');
            }
            parts.push_str(host);
            if let Some(p) = uri.port() {
                parts.push(':');
                parts.push_str(p);
                assert!(p.bytes().all(|b| b.is_ascii_digit()), "port {p:?}");
            }
            assert_eq!(parts, authority, "authority parts");
            // The path after an authority is empty or absolute.
            assert!(uri.path().is_empty() || uri.path().starts_with('/'));
            match uri.host_kind().expect("an authority has a host kind") {
                HostKind::Ipv4(o) => {
                    assert_eq!(format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3]), host);
                }
                HostKind::Ipv6(pieces) => {
                    let inner = host
                        .strip_prefix('[')
                        .and_then(|h| h.strip_suffix(']'))
                        .expect("an IPv6 literal is bracketed");
                    let std: std::net::Ipv6Addr = inner
                        .parse()
                        .unwrap_or_else(|_| panic!("std rejects IPv6 {inner:?}"));
                    assert_eq!(std.segments(), pieces, "IPv6 pieces of {inner:?}");
                }
                HostKind::IpvFuture => {
                    assert!(host.starts_with("[v") || host.starts_with("[V"));
                    assert!(host.ends_with(']'));
                }
                HostKind::RegName => {
                    assert!(!host.contains(['[', ']', ':', '@']), "reg-name {host:?}");
                    // First match wins: strict dotted IPv4 is never a reg-name.
                    let is_strict_v4 = host.split('.').count() == 4
                        && host.split('.').all(|o| {
                            !o.is_empty()
                                && o.len() <= 3
                                && o.bytes().all(|b| b.is_ascii_digit())
                                && (o == "0" || !o.starts_with('0'))
                                && o.parse::<u16>().is_ok_and(|n| n <= 255)
                        });
                    assert!(!is_strict_v4, "strict IPv4 {host:?} read as a reg-name");
                }
            }
        }
    }

    // The &str entry point agrees.
    let text = std::str::from_utf8(data).unwrap();
    let again = UriRef::parse(text).expect("parse rejects what parse_bytes accepts");
    assert_eq!(
        (
            again.scheme(),
            again.authority(),
            again.path(),
            again.query(),
            again.fragment()
        ),
        (
            uri.scheme(),
            uri.authority(),
            uri.path(),
            uri.query(),
            uri.fragment()
        )
    );
});
