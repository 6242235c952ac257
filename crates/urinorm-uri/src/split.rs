//! The one splitter of a reference already known to be valid (a canonical
//! form, a site rule's result): its components found the way RFC 3986
//! Appendix B splits a reference,
//! `^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`, without
//! checking a character, for what looks at a form once more (scope
//! filters, per-site caps, site rules) where a full parse would be most of
//! the work. On text that is not a valid reference it gives some ranges of
//! it, never a panic.
//!
//! It knows the delimiters of §3; not what a component may hold (that is
//! the parser's).

use std::ops::Range;

/// The scheme and authority of a reference: what most users of a split
/// need, found without looking at the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The scheme, without its `:`.
    pub scheme: Option<Range<usize>>,
    /// After `//`, up to the path: userinfo, host and port.
    pub authority: Option<Range<usize>>,
    /// The host within the authority, brackets included for an IP literal.
    pub host: Option<Range<usize>>,
}

/// Every component of a reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts {
    pub head: Head,
    pub path: Range<usize>,
    /// The query without its `?`.
    pub query: Option<Range<usize>>,
    /// The fragment without its `#`.
    pub fragment: Option<Range<usize>>,
}

/// The scheme and authority of `uri` (see the module's opening).
///
/// ```
/// use urinorm_uri::split::head;
/// let uri = b"http://user@[::1]:8080/a:b?c";
/// let parts = head(uri);
/// assert_eq!(&uri[parts.scheme.unwrap()], b"http");
/// assert_eq!(&uri[parts.authority.unwrap()], b"user@[::1]:8080");
/// assert_eq!(&uri[parts.host.unwrap()], b"[::1]");
/// assert_eq!(head(b"mailto:a@b").host, None);
/// ```
pub fn head(uri: &[u8]) -> Head {
    // Schemes and authorities are short, too short for a vector search:
    // one byte at a time.
    let scheme_end = uri
        .iter()
        .position(|&b| matches!(b, b':' | b'/' | b'?' | b'#'))
        .filter(|&end| end > 0 && uri[end] == b':');
    let after_scheme = scheme_end.map_or(0, |end| end + 1);
    let (authority, host) = match uri[after_scheme..].starts_with(b"//") {
        true => {
            let (authority, host) = authority_and_host(uri, after_scheme + 2);
            (Some(authority), Some(host))
        }
        false => (None, None),
    };
    Head {
        scheme: scheme_end.map(|end| 0..end),
        authority,
        host,
    }
}

/// Every component of `uri` (see the module's opening).
///
/// ```
/// use urinorm_uri::split::split;
/// let uri = b"https://u:p@Ex.com:8080/a/b?c=1&d#e?f";
/// let parts = split(uri);
/// assert_eq!(&uri[parts.head.host.unwrap()], b"Ex.com");
/// assert_eq!(&uri[parts.path], b"/a/b");
/// assert_eq!(&uri[parts.query.unwrap()], b"c=1&d");
/// assert_eq!(&uri[parts.fragment.unwrap()], b"e?f");
/// ```
pub fn split(uri: &[u8]) -> Parts {
    let head = head(uri);
    let path_start = match (&head.authority, &head.scheme) {
        (Some(authority), _) => authority.end,
        (None, Some(scheme)) => scheme.end + 1,
        (None, None) => 0,
    };
    let fragment_at = memchr::memchr(b'#', &uri[path_start..]).map(|n| path_start + n);
    let before_fragment = fragment_at.unwrap_or(uri.len());
    let query_at = memchr::memchr(b'?', &uri[path_start..before_fragment]).map(|n| path_start + n);
    Parts {
        head,
        path: path_start..query_at.unwrap_or(before_fragment),
        query: query_at.map(|q| q + 1..before_fragment),
        fragment: fragment_at.map(|f| f + 1..uri.len()),
    }
}

/// The authority starting at `start` (after `//`) and its host: the
/// authority ends at the first "/", "?" or "#" (§3.2); no "@" is in a host
/// or a userinfo (§3.2.1, §3.2.2), so the one there ends the userinfo; the
/// port follows the last ":" past an IP literal's "]" (§3.2.3).
fn authority_and_host(uri: &[u8], start: usize) -> (Range<usize>, Range<usize>) {
    let (mut host_start, mut host_end) = (start, None);
    let mut end = uri.len();
    for (i, &b) in uri.iter().enumerate().skip(start) {
        match b {
            b'/' | b'?' | b'#' => {
                end = i;
                break;
            }
            b'@' => (host_start, host_end) = (i + 1, None),
            b']' => host_end = None,
            b':' => host_end = Some(i),
            _ => {}
        }
    }
    (start..end, host_start..host_end.unwrap_or(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_split_as_section_3_2() {
        let host = |uri: &[u8]| split(uri).head.host.map(|h| uri[h].to_vec());
        assert_eq!(host(b"http://[::1]:80?q").as_deref(), Some(&b"[::1]"[..]));
        assert_eq!(split(b"http://[::1]:80?q").path, 15..15);
        assert_eq!(host(b"http://u:p@[::1]/").as_deref(), Some(&b"[::1]"[..]));
        assert_eq!(host(b"ws://h:").as_deref(), Some(&b"h"[..]));
        assert_eq!(
            host(b"//Example.com:80").as_deref(),
            Some(&b"Example.com"[..])
        );
        assert_eq!(host(b"http:/a"), None);
        assert_eq!(split(b"http://a#x?y").query, None);
    }

    #[test]
    fn a_path_without_authority_starts_after_the_scheme() {
        let parts = split(b"urn:a:b?q");
        assert_eq!((parts.path, parts.query), (4..7, Some(8..9)));
        assert_eq!(split(b"a/b:c").head.scheme, None);
        assert_eq!(split(b"?q").path, 0..0);
    }

    /// Any bytes split without a panic, into ranges in order.
    #[test]
    fn any_bytes_split_into_ordered_ranges() {
        use proptest::prelude::*;
        proptest!(|(uri in proptest::collection::vec(
            prop::sample::select(b":/?#@[]a1".to_vec()), 0..24))| {
            let parts = split(&uri);
            let ranges = [parts.head.authority.clone(), Some(parts.path.clone()), parts.query, parts.fragment];
            let mut at = parts.head.scheme.map_or(0, |s| s.end);
            for range in ranges.into_iter().flatten() {
                prop_assert!(at <= range.start && range.start <= range.end && range.end <= uri.len());
                at = range.end;
            }
            if let (Some(authority), Some(host)) = (parts.head.authority, parts.head.host) {
                prop_assert!(authority.start <= host.start && host.end <= authority.end);
            }
        });
    }
}
