//! Lenient repairs: what browsers and crawlers do to text that is almost a
//! URI (RFC 3986 Appendix C, and the WHATWG habit of percent-encoding what
//! cannot stand where it is). Each repair has a name, so a run can count
//! them, and a strict run can say which repair would have saved a line.
//!
//! A line that is already a valid URI reference is never changed.
//!
//! It knows text and the grammar; not columns, files or counts.

use crate::error::InvalidUri;
pub use crate::error::Repair;
use crate::table::{HEX_UPPER, REG_NAME, hex_value};
use crate::uri::UriRef;

/// Repairs `text`, appending the result to `out`; returns the set of
/// repairs made (as [`Repair::bit`]s). When `text` is already a valid URI
/// reference, nothing is appended and the set is empty.
///
/// ```
/// use urinorm_uri::lenient::{Repair, repair};
/// let mut out = Vec::new();
/// let done = repair(b"  \"http://example.com/a b\"  ", &mut out);
/// assert_eq!(out, b"http://example.com/a%20b");
/// assert_ne!(done & Repair::Unwrap.bit(), 0);
/// ```
pub fn repair(text: &[u8], out: &mut Vec<u8>) -> u32 {
    repair_tracked(text, out, None)
}

/// Where byte `repaired_offset` of `text`'s repair came from in `text`: a
/// rejection found in the repaired text is reported at the user's byte.
/// An offset past the repair's end maps to the end of `text`.
///
/// ```
/// use urinorm_uri::lenient::original_offset;
/// // "%EF%BB%BFhttps:…": the ':' at byte 14 of the repair is byte 8 of the text.
/// assert_eq!(original_offset(b"\xef\xbb\xbfhttps://x.gov/a", 14), 8);
/// // Inside <…> the space is line wrapping, removed: "http://a/bc".
/// assert_eq!(original_offset(b"  <http://a/b c>", 10), 14);
/// ```
pub fn original_offset(text: &[u8], repaired_offset: usize) -> usize {
    let mut sources = Vec::new();
    let mut out = Vec::new();
    if repair_tracked(text, &mut out, Some(&mut sources)) == 0 {
        return repaired_offset;
    }
    sources.get(repaired_offset).map_or(text.len(), |&s| s)
}

/// [`repair`], noting in `sources` (when given) the offset in `text` each
/// byte appended to `out` came from.
fn repair_tracked(text: &[u8], out: &mut Vec<u8>, mut sources: Option<&mut Vec<usize>>) -> u32 {
    if UriRef::parse_bytes(text).is_ok() {
        return 0;
    }
    let mut done = 0;
    let mut note = |r: Repair, changed: bool| {
        if changed {
            done |= r.bit();
        }
    };
    let trimmed = text.trim_ascii();
    note(Repair::TrimWhitespace, trimmed.len() != text.len());
    let (unwrapped, angle) = unwrap(trimmed);
    note(Repair::Unwrap, unwrapped.len() != trimmed.len());
    let start = out.len();
    let first = unwrapped.as_ptr() as usize - text.as_ptr() as usize;
    // Appendix C: whitespace inside a URI is line wrapping, not part of
    // it. Tabs and line breaks go wherever they are (browsers drop them
    // too); inside <…>, spaces as well, elsewhere a space is encoded.
    for (i, &b) in unwrapped.iter().enumerate() {
        let wrapping = matches!(b, b'\t' | b'\n' | b'\r');
        if wrapping || (angle && b.is_ascii_whitespace()) {
            note(Repair::EmbeddedWhitespace, true);
        } else {
            out.push(b);
            if let Some(sources) = sources.as_deref_mut() {
                sources.push(first + i);
            }
        }
    }
    let encoded = percent_encode(out, start, sources);
    note(Repair::PercentEncode, encoded.0);
    note(Repair::LonePercent, encoded.1);
    done
}

/// Removes one layer of `<…>`, `"…"` or `'…'`, and a leading `URL:`
/// (Appendix C). Says whether the wrapping was `<…>`.
fn unwrap(text: &[u8]) -> (&[u8], bool) {
    let (inner, angle) = match text {
        [b'<', inner @ .., b'>'] => (inner, true),
        [b'"', inner @ .., b'"'] | [b'\'', inner @ .., b'\''] => (inner, false),
        _ => (text, false),
    };
    let inner = inner.trim_ascii();
    let without_label = match inner.get(..4) {
        Some(label) if label.eq_ignore_ascii_case(b"URL:") => inner[4..].trim_ascii(),
        _ => inner,
    };
    (without_label, angle)
}

/// Percent-encodes in place, in `out[start..]`: spaces, controls, non-ASCII
/// bytes, the ASCII characters no URI holds (`"<>\^`{|}`), `[`/`]` outside
/// the authority, a second `#`; and writes a `%` not followed by two hex
/// digits as `%25`. Returns (percent-encoded something, fixed a lone `%`).
/// `sources`, when given, holds where each byte of `out[start..]` came from,
/// and is kept so as the bytes grow into triplets.
fn percent_encode(
    out: &mut Vec<u8>,
    start: usize,
    mut sources: Option<&mut Vec<usize>>,
) -> (bool, bool) {
    let text = out.split_off(start);
    let from = sources.as_deref_mut().map(std::mem::take);
    let authority = authority_range(&text);
    let (mut encoded, mut lone) = (false, false);
    let mut seen_hash = false;
    for (i, &b) in text.iter().enumerate() {
        let in_authority = authority.contains(&i);
        let keep = match b {
            b'%' => {
                let triplet = text.get(i + 1).and_then(|&h| hex_value(h)).is_some()
                    && text.get(i + 2).and_then(|&h| hex_value(h)).is_some();
                if !triplet {
                    lone = true;
                }
                triplet
            }
            b'#' => !std::mem::replace(&mut seen_hash, true),
            b'[' | b']' => in_authority,
            b':' | b'/' | b'?' | b'@' => true,
            _ => REG_NAME.allows(b),
        };
        let written = if keep {
            out.push(b);
            1
        } else {
            encoded |= b != b'%';
            out.extend_from_slice(&[
                b'%',
                HEX_UPPER[usize::from(b >> 4)],
                HEX_UPPER[usize::from(b & 15)],
            ]);
            3
        };
        if let (Some(sources), Some(from)) = (sources.as_deref_mut(), &from) {
            sources.extend(std::iter::repeat_n(from[i], written));
        }
    }
    (encoded, lone)
}

/// Where the authority is in `text` (after `scheme://` or a leading `//`).
fn authority_range(text: &[u8]) -> std::ops::Range<usize> {
    let scheme_end = text
        .iter()
        .position(|&b| b == b':')
        .filter(|&n| {
            n > 0
                && text[0].is_ascii_alphabetic()
                && text[1..n]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b))
        })
        .map_or(0, |n| n + 1);
    if !text[scheme_end..].starts_with(b"//") {
        return 0..0;
    }
    let start = scheme_end + 2;
    let end = text[start..]
        .iter()
        .position(|b| b"/?#".contains(b))
        .map_or(text.len(), |n| start + n);
    start..end
}

/// The URI references delimited in running text as RFC 3986 Appendix C
/// describes: inside `<…>` or `"…"`, with a `URL:` label and the whitespace
/// of line breaks removed. Candidates that are not absolute URIs once
/// extracted are skipped.
///
/// ```
/// let text = b"see <http://a.example/x\n   y> or \"ftp://b.example/\".";
/// assert_eq!(urinorm_uri::lenient::extract_delimited(text), [b"http://a.example/xy".to_vec(), b"ftp://b.example/".to_vec()]);
/// ```
pub fn extract_delimited(text: &[u8]) -> Vec<Vec<u8>> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let close = match text[i] {
            b'<' => b'>',
            b'"' => b'"',
            _ => {
                i += 1;
                continue;
            }
        };
        let Some(len) = text[i + 1..].iter().position(|&b| b == close) else {
            break;
        };
        let inner = &text[i + 1..i + 1 + len];
        let (unwrapped, _) = unwrap(inner.trim_ascii());
        let uri: Vec<u8> = unwrapped
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        if UriRef::parse_bytes(&uri).is_ok_and(|u| !u.is_relative()) {
            found.push(uri);
            i += len + 2;
        } else {
            i += 1;
        }
    }
    found
}

/// For a strict run: why `text` was rejected, naming the repair that would
/// fix it when one would. `error` is the parser's own reason.
pub fn explain_rejection(text: &[u8], error: InvalidUri) -> InvalidUri {
    let mut repaired = Vec::new();
    let done = repair(text, &mut repaired);
    if done == 0 || UriRef::parse_bytes(&repaired).is_err() {
        return error;
    }
    let first = Repair::ALL
        .into_iter()
        .find(|r| done & r.bit() != 0)
        .unwrap_or(Repair::PercentEncode);
    error.with_repair(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(text: &str) -> (String, Vec<&'static str>) {
        let mut out = Vec::new();
        let done = repair(text.as_bytes(), &mut out);
        let names = Repair::ALL
            .into_iter()
            .filter(|r| done & r.bit() != 0)
            .map(Repair::name)
            .collect();
        (String::from_utf8(out).unwrap(), names)
    }

    #[test]
    fn each_repair() {
        assert_eq!(
            repaired(" http://a/ \t"),
            ("http://a/".into(), vec!["trim-whitespace"])
        );
        assert_eq!(
            repaired("<http://a/>"),
            ("http://a/".into(), vec!["unwrap"])
        );
        assert_eq!(
            repaired("\"http://a/\""),
            ("http://a/".into(), vec!["unwrap"])
        );
        // "URL:http://a/" alone is a valid reference (scheme "URL"), left as is.
        assert_eq!(
            repaired("URL: http://a/"),
            ("http://a/".into(), vec!["unwrap"])
        );
        assert_eq!(
            repaired("<URL:http://a/b\n   c>"),
            ("http://a/bc".into(), vec!["unwrap", "embedded-whitespace"])
        );
        assert_eq!(
            repaired("http://a/b c"),
            ("http://a/b%20c".into(), vec!["percent-encode"])
        );
        // Appendix C: a tab or line break inside a URI is wrapping, dropped
        // (as browsers do), not encoded; a space is encoded.
        assert_eq!(
            repaired("http://exa\tmple.com/a\r\nb?q=\t1"),
            (
                "http://example.com/ab?q=1".into(),
                vec!["embedded-whitespace"]
            )
        );
        assert_eq!(
            repaired("http://a/b\t c"),
            (
                "http://a/b%20c".into(),
                vec!["embedded-whitespace", "percent-encode"]
            )
        );
        assert_eq!(
            repaired("http://a/é"),
            ("http://a/%C3%A9".into(), vec!["percent-encode"])
        );
        assert_eq!(
            repaired("http://a/{x}|[y]"),
            ("http://a/%7Bx%7D%7C%5By%5D".into(), vec!["percent-encode"])
        );
        assert_eq!(
            repaired("http://a/#x#y"),
            ("http://a/#x%23y".into(), vec!["percent-encode"])
        );
        assert_eq!(
            repaired("http://a/100%"),
            ("http://a/100%25".into(), vec!["lone-percent"])
        );
        assert_eq!(
            repaired("http://[::1]/ x"),
            ("http://[::1]/%20x".into(), vec!["percent-encode"])
        );
    }

    #[test]
    fn valid_references_are_never_changed() {
        for valid in [
            "http://a/%20",
            "a b".replace(' ', "%20").as_str(),
            "",
            "#",
            "http://[::1]/",
        ] {
            let mut out = Vec::new();
            assert_eq!(repair(valid.as_bytes(), &mut out), 0, "{valid}");
            assert!(out.is_empty());
        }
    }
}
