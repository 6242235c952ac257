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

/// A session id found in a path or query: `text[..keep]` stays and
/// `text[rest..]` follows it, as the expression's groups 1 and 2 would.
struct Cut {
    keep: usize,
    rest: usize,
}

/// One of IA's session-id expressions: the cut it makes in a whole path or
/// query, if any. Each pattern `P` is IA's, matched against the whole
/// component as `(?i-u)^(.*/)P/([^?]+\.aspx.*)$` (a path) or
/// `(?i-u)^(.*)P(?:&(.*))?$` (a query) with groups 1 and 2 kept, as IA's
/// are: in any ASCII case, on bytes. The matchers below find exactly what
/// those would, without a general engine.
type Expression = fn(&[u8]) -> Option<Cut>;

/// IA's session-id patterns on a path, each an ASP.NET cookieless segment
/// before a path that names an `.aspx` page, in IA's order.
const PATH_SESSION_IDS: [Expression; 2] = [
    |path| last_in_path(path, tagged_ids),
    |path| last_in_path(path, bare_id),
];

/// IA's session-id patterns on a query, in IA's order: each matches
/// anywhere (`sid=` ends `xsid=` too) and takes the following `&` with it.
const QUERY_SESSION_IDS: [Expression; 5] = [
    // jsessionid=[0-9a-z]{32}
    |query| last_in_query(query, &[Literal(b"jsessionid="), Run(ALNUM, 32)]),
    // phpsessid=[0-9a-z]{32}
    |query| last_in_query(query, &[Literal(b"phpsessid="), Run(ALNUM, 32)]),
    // sid=[0-9a-z]{32}
    |query| last_in_query(query, &[Literal(b"sid="), Run(ALNUM, 32)]),
    // aspsessionid[a-z]{8}=[a-z]{24}
    |query| {
        let id = [
            Literal(b"aspsessionid"),
            Run(ALPHA, 8),
            Literal(b"="),
            Run(ALPHA, 24),
        ];
        last_in_query(query, &id)
    },
    // cfid=[^&]+&cftoken=[^&]+
    last_cfid,
];

/// A piece of a session-id pattern: a literal, or exactly `n` bytes of a
/// class. Both in any ASCII case, as IA's `(?i)` patterns are; a byte
/// outside ASCII matches neither.
enum Piece {
    Literal(&'static [u8]),
    Run(fn(&u8) -> bool, usize),
}
use Piece::{Literal, Run};

/// `[0-9a-z]` in any case.
const ALNUM: fn(&u8) -> bool = u8::is_ascii_alphanumeric;
/// `[a-z]` in any case.
const ALPHA: fn(&u8) -> bool = u8::is_ascii_alphabetic;

/// The length of `pieces` at the start of `text`, if they are there. Each
/// piece has one length, so a match has one end: nothing to backtrack.
fn pieces_len(text: &[u8], pieces: &[Piece]) -> Option<usize> {
    let mut end = 0;
    for piece in pieces {
        let (ok, len) = match *piece {
            Literal(literal) => (
                text.get(end..end + literal.len())?
                    .eq_ignore_ascii_case(literal),
                literal.len(),
            ),
            Run(class, n) => (text.get(end..end + n)?.iter().all(class), n),
        };
        if !ok {
            return None;
        }
        end += len;
    }
    Some(end)
}

/// `\((?:[a-z]\([0-9a-z]{24}\))+\)` (ASP.NET's `(S(…))`, `(A(…)S(…))`):
/// its length at the start of `segment`. The `+` may stop only where a `)`
/// follows, and every further unit opens with a letter, so the longest run
/// of units is the only one that can match.
fn tagged_ids(segment: &[u8]) -> Option<usize> {
    const UNIT: [Piece; 4] = [Run(ALPHA, 1), Literal(b"("), Run(ALNUM, 24), Literal(b")")];
    let mut end = pieces_len(segment, &[Literal(b"(")])?;
    while let Some(len) = pieces_len(&segment[end..], &UNIT) {
        end += len;
    }
    (end > 1 && segment.get(end) == Some(&b')')).then_some(end + 1)
}

/// `\([0-9a-z]{24}\)` (ASP.NET 1's `(…)`): its length at the start of
/// `segment`.
fn bare_id(segment: &[u8]) -> Option<usize> {
    pieces_len(segment, &[Literal(b"("), Run(ALNUM, 24), Literal(b")")])
}

/// Where IA's `.` stops: it matches any byte but `\n` (`[^&]` and `[^?]`
/// match `\n` too), so a `(.*)` at the start ends in the first line and a
/// `.*` at the end starts in the last. URIs are one line; this keeps the
/// matchers exact on any bytes.
#[derive(Clone, Copy)]
struct Lines {
    first_end: usize,
    last_start: usize,
}

impl Lines {
    fn of(text: &[u8]) -> Lines {
        Lines {
            first_end: memchr::memchr(b'\n', text).unwrap_or(text.len()),
            last_start: memchr::memrchr(b'\n', text).map_or(0, |n| n + 1),
        }
    }
}

/// The last `id` in a path that `^(.*/)…/([^?]+\.aspx.*)$` accepts around
/// it; `id` gives its length at the start of a slice. The greedy `(.*/)`
/// takes the longest prefix it can, so this is the last id *that fits*: a
/// later one with no page after it is passed over for an earlier one.
///
/// An id holds no `?` and `[^?]+` none either, so the id and its page are in
/// one `?`-free stretch, the page at least a byte after the id's `/`; the
/// stretch's last `.aspx` (with no `\n` after it, for `.*`) is the page that
/// accepts the most ids. Stretch by stretch from the end, each byte is read
/// a bounded number of times.
fn last_in_path(path: &[u8], id: fn(&[u8]) -> Option<usize>) -> Option<Cut> {
    let lines = Lines::of(path);
    let mut stretch_end = path.len();
    loop {
        let stretch_start = memchr::memrchr(b'?', &path[..stretch_end]).map_or(0, |q| q + 1);
        let page_from = stretch_start.max(lines.last_start);
        let page = path
            .get(page_from..stretch_end)
            .and_then(|pages| rfind_ignore_case(pages, b".aspx"))
            .map(|n| page_from + n);
        if let Some(page) = page {
            // `^(.*/)`: after a `/`, in the first line.
            for keep in (stretch_start..page.min(lines.first_end + 1)).rev() {
                if keep == 0 || path[keep - 1] != b'/' {
                    continue;
                }
                let Some(slash) = id(&path[keep..]).map(|len| keep + len) else {
                    continue;
                };
                if slash + 1 < page && path[slash] == b'/' {
                    return Some(Cut {
                        keep,
                        rest: slash + 1,
                    });
                }
            }
        }
        if stretch_start == 0 {
            return None;
        }
        stretch_end = stretch_start - 1;
    }
}

/// The last id `pieces` match in a query that `^(.*)…(?:&(.*))?$` accepts
/// around it: the greedy `(.*)` makes it the last that fits (`sid=` + 33
/// letters is no id, but one before it still is).
fn last_in_query(query: &[u8], pieces: &[Piece]) -> Option<Cut> {
    let lines = Lines::of(query);
    (0..=lines.first_end).rev().find_map(|keep| {
        let end = keep + pieces_len(&query[keep..], pieces)?;
        let rest = rest_after(query, end, lines)?;
        Some(Cut { keep, rest })
    })
}

/// `(?:&(.*))?$` after an id that ends at `query[end]`: where what is kept
/// after it starts, if the query ends there or a `&` follows and the rest is
/// in the last line.
fn rest_after(query: &[u8], end: usize, lines: Lines) -> Option<usize> {
    let rest = match query.get(end) {
        None => end,
        Some(b'&') => end + 1,
        Some(_) => return None,
    };
    (rest >= lines.last_start).then_some(rest)
}

/// `cfid=[^&]+&cftoken=[^&]+` in a query, as [`last_in_query`] finds the
/// others. Neither value holds a `&`, so a match is pinned to a
/// `&cftoken=`: the token runs to the next `&` (it can stop nowhere else),
/// and `cfid=` is in the parameter before it, the last one there that leaves
/// its value a byte. Searching from each `&cftoken=` back, not from each
/// `cfid=` on, reads each parameter a bounded number of times, however many
/// `cfid=` it holds.
fn last_cfid(query: &[u8]) -> Option<Cut> {
    let lines = Lines::of(query);
    let mut before = query.len();
    while let Some(amp) = rfind_ignore_case(&query[..before], b"&cftoken=") {
        before = amp;
        let token = amp + b"&cftoken=".len();
        let end = memchr::memchr(b'&', &query[token..]).map_or(query.len(), |n| token + n);
        if end == token {
            continue;
        }
        let Some(rest) = rest_after(query, end, lines) else {
            continue;
        };
        let param = memchr::memrchr(b'&', &query[..amp]).map_or(0, |n| n + 1);
        // A byte of value before the `&`, and `(.*)` before `cfid=` in the
        // first line (`cfid=` holds no `\n`).
        let names_end = amp.saturating_sub(1).min(lines.first_end);
        let name = query
            .get(param..names_end)
            .and_then(|names| rfind_ignore_case(names, b"cfid="));
        if let Some(name) = name {
            return Some(Cut {
                keep: param + name,
                rest,
            });
        }
    }
    None
}

/// Where `needle` last occurs in `haystack`, in any ASCII case.
fn rfind_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .rposition(|w| w.eq_ignore_ascii_case(needle))
}

/// Removes IA's path session ids from `out[start..]`.
pub(super) fn drop_path_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
    let path = &out[start..];
    if memchr::memchr(b'(', path).is_none() || swar::find_ignore_case(path, b".aspx").is_none() {
        return false;
    }
    strip_repeatedly(out, start, &PATH_SESSION_IDS)
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
    strip_repeatedly(out, start, &QUERY_SESSION_IDS)
}

/// Applies `expressions` in order, each once, keeping what each keeps, and
/// again while one matches: the result is a fixed point.
fn strip_repeatedly(out: &mut Vec<u8>, start: usize, expressions: &[Expression]) -> bool {
    let mut changed = false;
    loop {
        let mut round = false;
        for expression in expressions {
            let Some(Cut { keep, rest }) = expression(&out[start..]) else {
                continue;
            };
            out.drain(start + keep..start + rest);
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

    /// A session-id transform on `out[start..]`, ours or the oracle's.
    type Strip = fn(&mut Vec<u8>, usize) -> bool;

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

    /// Where IA's expressions, as the `regex` crate runs them, cut other
    /// than where the last occurrence of a pattern is: each case is one a
    /// simpler search gets wrong, checked against the oracle too.
    #[test]
    fn session_ids_where_a_naive_search_goes_wrong() {
        let fill = |text: &str| {
            text.replace("{id}", "4hqa0555fwsecu455xqckv45")
                .replace("{token}", "0123456789abcdefghijklemopqrstuv")
        };
        let check = |f: Strip, oracle: Strip, cases: &[(&str, &str)]| {
            for (input, expected) in cases {
                let (input, expected) = (fill(input), fill(expected));
                assert_eq!(apply(f, &input), expected, "{input:?}");
                assert_eq!(apply(oracle, &input), expected, "the oracle on {input:?}");
            }
        };
        check(
            drop_path_session_ids,
            oracle::drop_path_session_ids,
            &[
                // The last id has no page after it: the one before it is cut.
                ("/({id})/a.aspx?/({id})/b", "/a.aspx?/({id})/b"),
                // `[^?]+` needs a byte before `.aspx`, and no `?`.
                ("/({id})/.aspx", "/({id})/.aspx"),
                ("/({id})//.aspx", "//.aspx"),
                ("/({id})/?a.aspx", "/({id})/?a.aspx"),
                // `.` stops at `\n`, `[^?]` does not.
                ("/({id})/a\n.aspx", "/a\n.aspx"),
                ("/({id})/a.aspx\n", "/({id})/a.aspx\n"),
                ("/\n/({id})/a.aspx", "/\n/({id})/a.aspx"),
                // Each unit of the grouped form opens with a letter; any case.
                ("/(s({id})({id}))/a.aspx", "/(s({id})({id}))/a.aspx"),
                ("/(S({id})A({id}))/A.ASPX", "/A.ASPX"),
                // Both forms in one round, the grouped one first.
                ("/(s({id}))/({id})/a.aspx", "/a.aspx"),
            ],
        );
        check(
            drop_query_session_ids,
            oracle::drop_query_session_ids,
            &[
                // The last id is followed by neither `&` nor the end: the one
                // before it is cut.
                ("sid={token}&sid={token}x", "sid={token}x"),
                ("SID={token}", ""),
                ("a\nsid={token}", "a\nsid={token}"),
                ("sid={token}&a\nb", "sid={token}&a\nb"),
                // The last `cfid=` leaves no value before the `&`: the one before
                // it takes it as its value.
                ("cfid=cfid=&cftoken=1", ""),
                ("x=cfid=cfid=1&cftoken=2", "x=cfid="),
                ("cfid=&cftoken=1", "cfid=&cftoken=1"),
                ("cfid=1&cftoken=", "cfid=1&cftoken="),
                // The token stops at the first `&`; the values may hold `\n`.
                ("cfid=1&cftoken=2&cftoken=3", "cftoken=3"),
                ("cfid=1\n2&cftoken=3\n4", ""),
                ("cfid=1&cftoken=2&a\nb", "cfid=1&cftoken=2&a\nb"),
                // `cfid=` is in the parameter just before `&cftoken=`.
                ("cfid=1&x&cftoken=2", "cfid=1&x&cftoken=2"),
            ],
        );
    }

    /// Long runs of one shape, where a search that rereads the rest of the
    /// text from every candidate would be slow: the same as the oracle.
    #[test]
    fn long_runs_of_one_shape_agree_with_the_oracle() {
        let id = "4hqa0555fwsecu455xqckv45";
        let token = "0123456789abcdefghijklemopqrstuv";
        for unit in [
            "cfid=".to_string(),
            "cfid=1&cftoken=".to_string(),
            "&cftoken=1".to_string(),
            format!("sid={token}&"),
            format!("sid={token}x&"),
            format!("/({id})"),
            format!("/({id})/"),
            format!("/(s({id})a({id}))/"),
            "/a.aspx?".to_string(),
        ] {
            for tail in ["", "/a.aspx", "&cftoken=1", "\n"] {
                let input = unit.repeat(200) + tail;
                let pairs: [(Strip, Strip); 2] = [
                    (drop_path_session_ids, oracle::drop_path_session_ids),
                    (drop_query_session_ids, oracle::drop_query_session_ids),
                ];
                for (ours, oracle) in pairs {
                    assert_eq!(
                        apply(ours, &input),
                        apply(oracle, &input),
                        "{unit:?} * 200 + {tail:?}"
                    );
                }
            }
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

    /// IA's expressions as the `regex` crate runs them, the way this module
    /// ran them before it had matchers of its own: the oracle they must
    /// agree with on every input.
    mod oracle {
        use std::sync::OnceLock;

        use regex::bytes::Regex;

        const PATH_SESSION_IDS: [&str; 2] =
            [r"\((?:[a-z]\([0-9a-z]{24}\))+\)", r"\([0-9a-z]{24}\)"];

        const QUERY_SESSION_IDS: [&str; 5] = [
            "jsessionid=[0-9a-z]{32}",
            "phpsessid=[0-9a-z]{32}",
            "sid=[0-9a-z]{32}",
            "aspsessionid[a-z]{8}=[a-z]{24}",
            "cfid=[^&]+&cftoken=[^&]+",
        ];

        /// The patterns as whole-component expressions whose groups 1 and 2
        /// are what remains.
        pub(super) fn expressions() -> &'static [Vec<Regex>; 2] {
            static EXPRESSIONS: OnceLock<[Vec<Regex>; 2]> = OnceLock::new();
            EXPRESSIONS.get_or_init(|| {
                let compile =
                    |pattern: String| Regex::new(&pattern).expect("IA's patterns compile");
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

        /// One expression applied once to `out[start..]`, keeping groups 1 and 2.
        pub(super) fn strip_once(out: &mut Vec<u8>, start: usize, expression: &Regex) -> bool {
            let Some(groups) = expression.captures(&out[start..]) else {
                return false;
            };
            let kept = start + groups.get(1).map_or(0, |g| g.end());
            let rest = groups.get(2).map_or(0..0, |g| g.range());
            out.copy_within(start + rest.start..start + rest.end, kept);
            out.truncate(kept + rest.len());
            true
        }

        pub(super) fn drop_path_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
            let path = &out[start..];
            if memchr::memchr(b'(', path).is_none()
                || crate::swar::find_ignore_case(path, b".aspx").is_none()
            {
                return false;
            }
            strip_repeatedly(out, start, &expressions()[0])
        }

        pub(super) fn drop_query_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
            let query = &out[start..];
            if !["jsessionid=", "sid=", "aspsessionid", "cftoken="]
                .iter()
                .any(|needle| crate::swar::find_ignore_case(query, needle.as_bytes()).is_some())
            {
                return false;
            }
            strip_repeatedly(out, start, &expressions()[1])
        }

        fn strip_repeatedly(out: &mut Vec<u8>, start: usize, expressions: &[Regex]) -> bool {
            let mut changed = false;
            loop {
                let mut round = false;
                for expression in expressions {
                    round |= strip_once(out, start, expression);
                }
                if !round {
                    return changed;
                }
                changed = true;
            }
        }
    }

    mod against_the_oracle {
        use super::*;
        use proptest::collection::SizeRange;
        use proptest::prelude::*;
        use proptest::sample::{Index, select};

        const ALNUM: &[u8] = b"0123456789abcdefxyzABCDEFXYZ";
        const LETTERS: &[u8] = b"abcsxyzABCSXYZ";
        /// What the patterns are made of, with their near misses.
        const PIECES: &[&[u8]] = &[
            b"jsessionid=",
            b"JSessionID=",
            b"phpsessid=",
            b"PHPSESSID=",
            b"sid=",
            b"SId=",
            b"xsid=",
            b"aspsessionid",
            b"ASPSessionID",
            b"cfid=",
            b"CFID=",
            b"&cftoken=",
            b"&CFToken=",
            b"cftoken=",
            b"&",
            b"&&",
            b"=",
            b"(",
            b")",
            b"))",
            b"/",
            b"//",
            b"/(",
            b")/",
            b"))/",
            b"s(",
            b"A(",
            b".aspx",
            b".asp",
            b"?",
            b"\n",
            b"a",
            b"Z",
            b"9",
            b"-",
            b"\xc3\xa9",
            b"\xff",
        ];
        /// Pages for a path's ids, some they do not accept.
        const PAGES: &[&[u8]] = &[
            b"x.aspx",
            b"/a.ASPX",
            b".aspx",
            b"/x.aspx?q",
            b"a.aspx\n",
            b"a\n.aspx",
        ];
        /// The lengths of the patterns' runs, and one off.
        const RUN_LENGTHS: &[usize] = &[1, 2, 7, 8, 9, 23, 24, 25, 31, 32, 33];

        fn cat(parts: &[&[u8]]) -> Vec<u8> {
            parts.concat()
        }

        fn run(class: &'static [u8], len: impl Into<SizeRange>) -> impl Strategy<Value = Vec<u8>> {
            prop::collection::vec(select(class), len)
        }

        /// A session id of each pattern (a path's between `/`s), or one
        /// byte away from one.
        fn id() -> impl Strategy<Value = Vec<u8>> {
            let unit = (run(LETTERS, 1), run(ALNUM, 24))
                .prop_map(|(letter, id)| cat(&[&letter, b"(", &id, b")"]));
            let units = prop::collection::vec(unit, 1..4)
                .prop_map(|units| cat(&[b"/(", &units.concat(), b")/"]));
            let single = run(ALNUM, 24).prop_map(|id| cat(&[b"/(", &id, b")/"]));
            let names: &[&[u8]] = &[b"jsessionid=", b"phpsessid=", b"sid="];
            let token = (select(names), run(ALNUM, 32)).prop_map(|(name, id)| cat(&[name, &id]));
            let asp = (run(LETTERS, 8), run(LETTERS, 24))
                .prop_map(|(a, b)| cat(&[b"aspsessionid", &a, b"=", &b]));
            let value = || run(b"0aZ=?/(\n\xff", 1..4);
            let cfid = (value(), value()).prop_map(|(a, b)| cat(&[b"cfid=", &a, b"&cftoken=", &b]));
            let exact = prop_oneof![units, single, token, asp, cfid];
            (exact, 0..4u8, any::<Index>(), any::<u8>()).prop_map(|(mut id, edit, at, byte)| {
                let at = at.index(id.len());
                match edit {
                    0 => drop(id.remove(at)),
                    1 => id.insert(at, byte),
                    2 => id[at] = byte,
                    _ => {}
                }
                id
            })
        }

        /// Paths and queries made of the patterns' pieces.
        fn text() -> impl Strategy<Value = Vec<u8>> {
            let piece = prop_oneof![
                4 => select(PIECES).prop_map(<[u8]>::to_vec),
                2 => select(PAGES).prop_map(<[u8]>::to_vec),
                2 => select(RUN_LENGTHS).prop_flat_map(|n| run(ALNUM, n)),
                1 => select(RUN_LENGTHS).prop_flat_map(|n| run(LETTERS, n)),
                4 => id(),
                1 => any::<u8>().prop_map(|b| vec![b]),
            ];
            prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
        }

        /// Bytes as they would be written in a Rust string: unlike a list of
        /// numbers, readable in a failure.
        fn escaped(bytes: &[u8]) -> String {
            bytes.escape_ascii().to_string()
        }

        proptest! {
            #[test]
            fn each_expression_cuts_what_the_regex_cuts(text in text()) {
                let expressions = oracle::expressions();
                let ours = PATH_SESSION_IDS.iter().chain(&QUERY_SESSION_IDS);
                for (expression, regex) in ours.zip(expressions[0].iter().chain(&expressions[1])) {
                    let ours = expression(&text).map(|Cut { keep, rest }| {
                        let mut out = text.clone();
                        out.drain(keep..rest);
                        escaped(&out)
                    });
                    let mut out = text.clone();
                    let theirs = oracle::strip_once(&mut out, 0, regex).then(|| escaped(&out));
                    prop_assert_eq!(ours, theirs, "{} on {}", regex, escaped(&text));
                }
            }

            #[test]
            fn the_transforms_write_what_the_regex_writes(text in text()) {
                let run = |f: Strip| {
                    let mut out = b"http://h".to_vec();
                    out.extend_from_slice(&text);
                    let changed = f(&mut out, 8);
                    (changed, escaped(&out[8..]))
                };
                prop_assert_eq!(run(drop_path_session_ids), run(oracle::drop_path_session_ids));
                prop_assert_eq!(run(drop_query_session_ids), run(oracle::drop_query_session_ids));
            }
        }
    }
}
