//! The Internet Archive's canonicalization as protocol-rung transforms, for
//! the `ia` preset: what its `surt` library (the Google canonicalizer, then
//! the IA canonicalizer) does that no other transform does — dots in hosts,
//! `www2.` labels, unescaping repeatedly, its session-id patterns and its
//! query order.
//!
//! These are IA's rules, not RFC 3986's: `%2F` becomes a path's `/` and
//! `%26` a query's `&`, which §2.2 forbids. They are here so that keys match
//! the CDX indexes built with them; the README lists each disagreement.
//! Where IA's single pass is not a fixed point (`www.www.`, two session
//! ids), these repeat until nothing changes, as every transform must.

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex::bytes::Regex;

use super::syntax::decode_triplets;
use crate::swar;
use crate::table::{self, HEX_UPPER, Table};

/// Collapses each run of `.` in the host at `out[host_start..]` to one and
/// drops leading and trailing dots (`.www..example.com..` →
/// `www.example.com`), unless nothing would remain.
pub(super) fn host_dots(out: &mut Vec<u8>, host_start: usize) -> bool {
    let host = &out[host_start..];
    if !has_extra_dots(host) || host.iter().all(|&b| b == b'.') {
        return false;
    }
    let mut write = host_start;
    for read in host_start..out.len() {
        let byte = out[read];
        let after_dot = write == host_start || out[write - 1] == b'.';
        if byte == b'.' && after_dot {
            continue;
        }
        out[write] = byte;
        write += 1;
    }
    if out[write - 1] == b'.' {
        write -= 1;
    }
    out.truncate(write);
    true
}

/// Whether a host has a dot `host-dots` removes: leading, trailing or
/// doubled.
pub(super) fn has_extra_dots(host: &[u8]) -> bool {
    host.starts_with(b".") || host.ends_with(b".") || swar::find_pair(host, b'.', b'.').is_some()
}

/// Drops leading `www.` and `www` + digits labels (`www2.`, `www34.`) from
/// the host at `out[host_start..]`, whatever remains (IA's `www\d*\.`):
/// no Public Suffix List, unlike `strip-www`.
pub(super) fn strip_www_digits(out: &mut Vec<u8>, host_start: usize) -> bool {
    let mut changed = false;
    while let Some(label) = www_label_len(&out[host_start..]) {
        out.drain(host_start..host_start + label);
        changed = true;
    }
    changed
}

/// The length of a leading `www` + digits + `.` label, when something follows it.
fn www_label_len(host: &[u8]) -> Option<usize> {
    let rest = host.strip_prefix(b"www")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let label = 3 + digits + 1;
    (rest.get(digits) == Some(&b'.') && host.len() > label).then_some(label)
}

/// A component `decode-repeatedly` rewrites, and what may stand raw in it.
#[derive(Clone, Copy)]
pub(super) enum Component {
    Path,
    Query,
}

impl Component {
    /// What this component holds as itself (§3.3, §3.4); IA writes more raw
    /// (`"<>[\]^`{|}` and a path's `?`), which a URI cannot hold: those stay
    /// encoded in the canonical form, and `cdx-spelling` writes them raw in keys.
    const fn raw(self) -> &'static Table {
        match self {
            Component::Path => &table::PATH,
            Component::Query => &table::QUERY,
        }
    }
}

/// IA's `unescapeRepeatedly` then minimal escape on `out[start..]`: every
/// `%XX` decoded, again while any remains (`%2525` → `%25` → `%`), then
/// only what the component cannot hold encoded again, in upper-case hex
/// (§2.1). In a path, dot segments the decoding made (`%2F..%2F`) are then
/// removed (§5.2.4), as IA's `normalizePath` does. `encoded` is the
/// caller's scratch.
pub(super) fn decode_repeatedly(
    out: &mut Vec<u8>,
    start: usize,
    component: Component,
    encoded: &mut Vec<u8>,
) -> bool {
    if memchr::memchr(b'%', &out[start..]).is_none() {
        return false;
    }
    encoded.clear();
    encoded.extend_from_slice(&out[start..]);
    while decode_triplets(encoded, 0, |_| true) {}
    // The decoded bytes, then after them the same encoded again.
    let decoded = encoded.len();
    let raw = component.raw();
    for i in 0..decoded {
        let byte = encoded[i];
        if raw.allows(byte) {
            encoded.push(byte);
        } else {
            encoded.extend_from_slice(&[
                b'%',
                HEX_UPPER[usize::from(byte >> 4)],
                HEX_UPPER[usize::from(byte & 0xf)],
            ]);
        }
    }
    let changed = encoded[decoded..] != out[start..];
    if changed {
        out.truncate(start);
        out.extend_from_slice(&encoded[decoded..]);
    }
    if changed && matches!(component, Component::Path) {
        crate::resolve::remove_dot_segments(out, start);
    }
    changed
}

/// IA's session-id patterns on a path, each an ASP.NET cookieless segment
/// before a path that names an `.aspx` page, in IA's order.
const PATH_SESSION_IDS: [&str; 2] = [r"\((?:[a-z]\([0-9a-z]{24}\))+\)", r"\([0-9a-z]{24}\)"];

/// IA's session-id patterns on a query, in IA's order: each matches
/// anywhere (`sid=` ends `xsid=` too) and takes the following `&` with it.
const QUERY_SESSION_IDS: [&str; 5] = [
    "jsessionid=[0-9a-z]{32}",
    "phpsessid=[0-9a-z]{32}",
    "sid=[0-9a-z]{32}",
    "aspsessionid[a-z]{8}=[a-z]{24}",
    "cfid=[^&]+&cftoken=[^&]+",
];

/// The patterns as whole-component expressions whose groups 1 and 2 are
/// what remains: the greedy `(.*)` makes each remove its last occurrence,
/// as IA's does. Case-insensitive, bytes, no Unicode classes.
fn session_id_expressions() -> &'static [Vec<Regex>; 2] {
    static EXPRESSIONS: OnceLock<[Vec<Regex>; 2]> = OnceLock::new();
    EXPRESSIONS.get_or_init(|| {
        let compile = |pattern: String| Regex::new(&pattern).expect("IA's patterns compile");
        [
            PATH_SESSION_IDS
                .iter()
                .map(|p| compile(format!(r"(?i-u)^(.*/){p}/([^?]+\.aspx.*)$")))
                .collect(),
            QUERY_SESSION_IDS
                .iter()
                .map(|p| compile(format!("(?i-u)^(.*){p}(?:&(.*))?$")))
                .collect(),
        ]
    })
}

/// Removes IA's path session ids from `out[start..]`.
pub(super) fn drop_path_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
    let path = &out[start..];
    if memchr::memchr(b'(', path).is_none() || swar::find_ignore_case(path, b".aspx").is_none() {
        return false;
    }
    strip_repeatedly(out, start, &session_id_expressions()[0])
}

/// Removes IA's query session ids from the query at `out[start..]`.
pub(super) fn drop_query_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
    let query = &out[start..];
    if !["jsessionid=", "sid=", "aspsessionid", "cftoken="]
        .iter()
        .any(|needle| swar::find_ignore_case(query, needle.as_bytes()).is_some())
    {
        return false;
    }
    strip_repeatedly(out, start, &session_id_expressions()[1])
}

/// Applies `expressions` in order, each once, keeping groups 1 and 2, and
/// again while one matches: the result is a fixed point.
fn strip_repeatedly(out: &mut Vec<u8>, start: usize, expressions: &[Regex]) -> bool {
    let mut changed = false;
    loop {
        let mut round = false;
        for expression in expressions {
            let Some(groups) = expression.captures(&out[start..]) else {
                continue;
            };
            let kept = start + groups.get(1).map_or(0, |g| g.end());
            let rest = groups.get(2).map_or(0..0, |g| g.range());
            // The rest moves down over the session id, after what is kept.
            out.copy_within(start + rest.start..start + rest.end, kept);
            out.truncate(kept + rest.len());
            round = true;
        }
        if !round {
            return changed;
        }
        changed = true;
    }
}

/// IA's query order: by name, then by what follows it (`a` before `a=`
/// before `a=1`), byte by byte: the order of Python's tuples `(name,)` and
/// `(name, value)`.
pub(super) fn pair_order(a: &[u8], b: &[u8]) -> Ordering {
    name_and_rest(a).cmp(&name_and_rest(b))
}

fn name_and_rest(param: &[u8]) -> (&[u8], &[u8]) {
    param.split_at(memchr::memchr(b'=', param).unwrap_or(param.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(f: impl Fn(&mut Vec<u8>, usize) -> bool, input: &str) -> String {
        let mut out = b"http://".to_vec();
        out.extend_from_slice(input.as_bytes());
        f(&mut out, 7);
        String::from_utf8(out[7..].to_vec()).unwrap()
    }

    #[test]
    fn host_dots_collapse_and_trim() {
        for (input, expected) in [
            ("www.google.com...", "www.google.com"),
            (".a..b.", "a.b"),
            ("a....b", "a.b"),
            ("a.b", "a.b"),
            ("...", "..."),
        ] {
            assert_eq!(apply(host_dots, input), expected, "{input}");
        }
    }

    /// urlcanon's `massageHost` vectors, and what must stay.
    #[test]
    fn www_labels_with_digits() {
        for (input, expected) in [
            ("foo.com", "foo.com"),
            ("www.foo.com", "foo.com"),
            ("www12.foo.com", "foo.com"),
            ("www2foo.com", "www2foo.com"),
            ("www2.www2foo.com", "www2foo.com"),
            ("www.www3.a.com", "a.com"),
            ("www.", "www."),
            ("www.com", "com"),
        ] {
            assert_eq!(apply(strip_www_digits, input), expected, "{input}");
        }
    }

    /// urlcanon's `unescapeRepeatedly` vectors, as a path would hold them
    /// (a `%` alone is written `%25`), and IA's path and query cases.
    #[test]
    fn decoding_repeatedly_then_encoding_minimally() {
        let path = |input: &str| {
            apply(
                |o, s| decode_repeatedly(o, s, Component::Path, &mut Vec::new()),
                input,
            )
        };
        let query = |input: &str| {
            apply(
                |o, s| decode_repeatedly(o, s, Component::Query, &mut Vec::new()),
                input,
            )
        };
        for (input, expected) in [
            ("/%25", "/%25"),
            ("/%2525", "/%25"),
            ("/%252525", "/%25"),
            ("/%25%32%35", "/%25"),
            ("/%2541", "/A"),
            ("/a%2Fb", "/a/b"),
            ("/a%2F..%2Fb", "/b"),
            ("/%3F%23%22%20%C3%A9", "/%3F%23%22%20%C3%A9"),
            ("/%7E%21%28", "/~!("),
        ] {
            assert_eq!(path(input), expected, "{input}");
        }
        assert_eq!(query("a%3Db%26c%3Fd%2F%23"), "a=b&c?d/%23");
        let mut unchanged = b"http://h/%25%22".to_vec();
        assert!(!decode_repeatedly(
            &mut unchanged,
            8,
            Component::Path,
            &mut Vec::new()
        ));
    }

    /// urlcanon's `stripPathSessionId` vectors (lower-cased, as IA's path
    /// is when they run) and IA's query patterns.
    #[test]
    fn session_ids_as_ia_finds_them() {
        let id = "4hqa0555fwsecu455xqckv45";
        for (input, expected) in [
            (format!("/(s({id}))/mileg.aspx"), "/mileg.aspx"),
            (format!("/({id})/mileg.aspx"), "/mileg.aspx"),
            (
                format!("/(a({id})s({id})f({id}))/mileg.aspx"),
                "/mileg.aspx",
            ),
            ("/photos/36050182@n05/".to_string(), "/photos/36050182@n05/"),
            (
                format!("/({id})/mileg.html"),
                &format!("/({id})/mileg.html"),
            ),
        ] {
            assert_eq!(apply(drop_path_session_ids, &input), expected, "{input}");
        }
        let token = "0123456789abcdefghijklemopqrstuv";
        for (input, expected) in [
            (
                format!("phpsessid={token}&action=profile"),
                "action=profile".to_string(),
            ),
            (format!("a=1&jsessionid={token}"), "a=1&".to_string()),
            // `sid=` has no left boundary: IA leaves the name's first letters.
            (format!("a=1&xsid={token}&b=2"), "a=1&xb=2".to_string()),
            (
                format!("jsessionid={token}x"),
                format!("jsessionid={token}x"),
            ),
            ("cfid=12&cftoken=ab-c&z=1".to_string(), "z=1".to_string()),
            (
                "aspsessionidabcdefgh=abcdefghijklmnopqrstuvwx".to_string(),
                String::new(),
            ),
            (format!("sid={token}&sid={token}"), String::new()),
        ] {
            assert_eq!(apply(drop_query_session_ids, &input), expected, "{input}");
        }
    }

    /// urlcanon's `alphaRorderQuery` vectors.
    #[test]
    fn pairs_sort_by_name_then_value() {
        for (input, expected) in [
            ("a=1&", "&a=1"),
            ("b=1&a=1", "a=1&b=1"),
            ("a=b&a=a", "a=a&a=b"),
            ("b=b&a=b&b=a&a=a", "a=a&a=b&b=a&b=b"),
            ("a=1&a&a-b", "a&a=1&a-b"),
        ] {
            let mut params: Vec<&[u8]> = input.as_bytes().split(|&b| b == b'&').collect();
            params.sort_by(|a, b| pair_order(a, b));
            assert_eq!(params.join(&b"&"[..]), expected.as_bytes(), "{input}");
        }
    }
}
