//! `drop-session-ids`: what a session token looks like, in a query
//! parameter (`PHPSESSID=…`, `sid=…`) and in a path (`;jsessionid=…`,
//! ASP.NET's cookieless segments).
//!
//! It knows parameters and path segments as bytes; not URIs.

use crate::swar;

/// A value that looks like a session token rather than data: long, and
/// made only of letters, digits and `-_.`.
fn is_token(value: &[u8], min_len: usize) -> bool {
    value.len() >= min_len
        && value
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// `PHPSESSID=…`, `JSESSIONID=…`, `ASPSESSIONIDXXXX=…`, `sid=…`,
/// `CFID=…`, `CFTOKEN=…` with a token-like value: the parameter whose name
/// is `name` and value `value`.
pub(super) fn is_session_param(name: &[u8], value: &[u8]) -> bool {
    let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
    // Most names are ruled out by their length alone.
    match name.len() {
        10 if is(b"jsessionid") => is_jsessionid(value),
        3 if is(b"sid") => is_token(value, 16),
        9 if is(b"phpsessid") => is_token(value, 16),
        12.. if name[..12].eq_ignore_ascii_case(b"aspsessionid") => is_token(value, 16),
        4 if is(b"cfid") => is_token(value, 4),
        7 if is(b"cftoken") => is_token(value, 4),
        _ => false,
    }
}

/// A `jsessionid` value: a token, which WebLogic follows with `!` and a
/// server number (`…!-12345`) and some servers mark with `$`.
fn is_jsessionid(value: &[u8]) -> bool {
    let token_end = value
        .iter()
        .position(|&b| b == b'!' || b == b'$')
        .unwrap_or(value.len());
    let (token, rest) = value.split_at(token_end);
    is_token(token, 16)
        && rest
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-_.!$".contains(&b))
}

/// Removes `;jsessionid=TOKEN` path parameters and ASP.NET cookieless
/// session segments from the path at `out[start..]`.
pub(super) fn drop_path_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
    // Both forms need one of these; most paths have neither.
    if !swar::has_either(&out[start..], b';', b'(') {
        return false;
    }
    let mut changed = false;
    // ;jsessionid=… runs to the end of its segment.
    while let Some(at) = swar::find_ignore_case(&out[start..], b";jsessionid=") {
        let at = start + at;
        let value_start = at + b";jsessionid=".len();
        let value_end = out[value_start..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(out.len(), |n| value_start + n);
        if !is_jsessionid(&out[value_start..value_end]) {
            break;
        }
        out.drain(at..value_end);
        changed = true;
    }
    // `/(…)/` segments: each segment that opens with `(` is looked at once.
    let mut from = start;
    while let Some(at) = swar::find_pair(&out[from..], b'/', b'(').map(|n| from + n) {
        let segment_end = out[at + 1..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(out.len(), |n| at + 1 + n);
        let last = segment_end == out.len();
        if is_asp_session_segment(&out[at + 1..segment_end], last) {
            out.drain(at..segment_end);
            changed = true;
        } else {
            from = at + 1;
        }
    }
    // `/(S(…))` alone leaves no path, which http writes as `/` (§6.2.3).
    if out.len() == start && changed {
        out.push(b'/');
    }
    changed
}

/// An ASP.NET cookieless session segment: `(S(token))`, or the compound
/// forms `(X(1)S(token))`, `(A(token)S(token)F(token))` (each part a letter
/// and a value in parentheses; a session `S` among them, or only long
/// tokens), or, before the last segment, a bare `(token)` of ASP.NET's 24
/// characters.
fn is_asp_session_segment(segment: &[u8], last: bool) -> bool {
    let Some(inner) = segment
        .strip_prefix(b"(")
        .and_then(|s| s.strip_suffix(b")"))
    else {
        return false;
    };
    if !last && inner.len() == 24 && is_token(inner, 24) {
        return true;
    }
    let mut rest = inner;
    let (mut parts, mut session, mut all_tokens) = (0, false, true);
    while !rest.is_empty() {
        let [letter, b'(', after @ ..] = rest else {
            return false;
        };
        let Some(close) = after.iter().position(|&b| b == b')') else {
            return false;
        };
        let value = &after[..close];
        if !letter.is_ascii_alphabetic() || !is_token(value, 1) {
            return false;
        }
        let long = is_token(value, 16);
        session |= letter.eq_ignore_ascii_case(&b'S') && long;
        all_tokens &= long;
        parts += 1;
        rest = &after[close + 1..];
    }
    parts > 0 && (session || all_tokens)
}
