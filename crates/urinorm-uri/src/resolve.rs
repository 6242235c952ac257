//! Reference resolution (RFC 3986 §5.2): `merge`, `remove_dot_segments` and the
//! transform of a reference against a base URI.
//!
//! Everything writes into a caller's `Vec<u8>`; dot segments are removed in
//! place, because the algorithm of §5.2.4 never writes more bytes than it has
//! read.
//!
//! It knows references and bases, nothing of normalization or files.

use crate::error::{ErrorKind, InvalidUri};
use crate::uri::UriRef;

/// Which reading of §5.2.2 to apply to a reference that names the base's scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SchemeRule {
    /// The RFC's algorithm: a reference with a scheme is absolute (`http:g` stays `http:g`).
    #[default]
    Strict,
    /// The backward-compatible reading of §5.2.2: a reference whose scheme equals
    /// the base's is read as relative (`http:g` against `http://a/b/c/d;p?q` is
    /// `http://a/b/c/g`).
    NonStrict,
}

/// Resolves `reference` against `base` (§5.2.2) and returns the target URI.
///
/// ```
/// use urinorm_uri::resolve::resolve;
/// assert_eq!(resolve("http://a/b/c/d;p?q", "../g")?, "http://a/b/g");
/// assert_eq!(resolve("http://a/b/c/d;p?q", "?y")?, "http://a/b/c/d;p?y");
/// # Ok::<(), urinorm_uri::InvalidUri>(())
/// ```
pub fn resolve(base: &str, reference: &str) -> Result<String, InvalidUri> {
    let base = UriRef::parse(base)?;
    let reference = UriRef::parse(reference)?;
    let mut out = Vec::new();
    resolve_into(&base, &reference, SchemeRule::Strict, &mut out)?;
    // The target is recomposed from components of two ASCII references.
    Ok(String::from_utf8(out).expect("a resolved URI is ASCII"))
}

/// Resolves `reference` against `base` (§5.2.2), appending the target URI to
/// `out` recomposed as §5.3 says. Allocates nothing beyond `out`'s growth.
///
/// The base must have a scheme (§5.1); its fragment is ignored. When the
/// target has no authority and its path would start with `//`, the path is
/// written as `/.//…`, so that the output re-parses to the same components
/// (RFC 3986 leaves this case open; the `/.` prefix is the fix that WHATWG URL
/// and iri-string apply, and it names the same path after dot removal).
pub fn resolve_into(
    base: &UriRef<'_>,
    reference: &UriRef<'_>,
    rule: SchemeRule,
    out: &mut Vec<u8>,
) -> Result<(), InvalidUri> {
    let base_scheme = base
        .scheme()
        .ok_or(InvalidUri::new(0, ErrorKind::RelativeBase))?;
    let own_scheme = reference
        .scheme()
        .filter(|s| rule == SchemeRule::Strict || !s.eq_ignore_ascii_case(base_scheme));

    out.extend_from_slice(own_scheme.unwrap_or(base_scheme).as_bytes());
    out.push(b':');
    let (authority, query) = if own_scheme.is_some() || reference.authority().is_some() {
        (reference.authority(), reference.query())
    } else {
        (base.authority(), None)
    };
    if let Some(authority) = authority {
        out.extend_from_slice(b"//");
        out.extend_from_slice(authority.as_bytes());
    }
    let path_start = out.len();
    let query = if own_scheme.is_some() || reference.authority().is_some() {
        push_without_dots(out, reference.path());
        query
    } else if reference.path().is_empty() {
        out.extend_from_slice(base.path().as_bytes());
        reference.query().or(base.query())
    } else {
        if reference.path().starts_with('/') {
            push_without_dots(out, reference.path());
        } else {
            merge(base, reference.path(), out);
            remove_dot_segments(out, path_start);
        }
        reference.query()
    };
    if authority.is_none() && out[path_start..].starts_with(b"//") {
        out.splice(path_start..path_start, *b"/.");
    }
    if let Some(query) = query {
        out.push(b'?');
        out.extend_from_slice(query.as_bytes());
    }
    if let Some(fragment) = reference.fragment() {
        out.push(b'#');
        out.extend_from_slice(fragment.as_bytes());
    }
    Ok(())
}

/// Appends `path` to `out` with its dot segments removed.
fn push_without_dots(out: &mut Vec<u8>, path: &str) {
    let start = out.len();
    out.extend_from_slice(path.as_bytes());
    remove_dot_segments(out, start);
}

/// §5.2.3: appends the merge of a relative-path reference with the base's path.
fn merge(base: &UriRef<'_>, reference_path: &str, out: &mut Vec<u8>) {
    let base_path = base.path();
    if base.authority().is_some() && base_path.is_empty() {
        out.push(b'/');
    } else if let Some(last_slash) = base_path.rfind('/') {
        out.extend_from_slice(&base_path.as_bytes()[..=last_slash]);
    }
    out.extend_from_slice(reference_path.as_bytes());
}

/// §5.2.4: removes the `.` and `..` segments of the path in `buf[start..]`,
/// in place.
///
/// The input buffer of the RFC is `buf[read..]` and its output buffer is
/// `buf[start..write]`; every step writes at most what it has read, so
/// `write <= read` holds throughout and the two never overlap.
///
/// ```
/// let mut buf = b"/a/b/c/./../../g".to_vec();
/// urinorm_uri::resolve::remove_dot_segments(&mut buf, 0);
/// assert_eq!(buf, b"/a/g");
/// let mut buf = b"mid/content=5/../6".to_vec();
/// urinorm_uri::resolve::remove_dot_segments(&mut buf, 0);
/// assert_eq!(buf, b"mid/6");
/// ```
pub fn remove_dot_segments(buf: &mut Vec<u8>, start: usize) {
    let kept = remove_dot_segments_within(&mut buf[start..]);
    buf.truncate(start + kept);
}

/// [`remove_dot_segments`] on a path standing anywhere, with bytes after
/// it: the path without its dot segments is left at the front of `path`,
/// and its length returned.
pub(crate) fn remove_dot_segments_within(path: &mut [u8]) -> usize {
    let end = path.len();
    // Segments before the first `/.` are not dot segments and stay where
    // they are, unless the path starts with a dot (rules 2A and 2D).
    let untouched = match path.first() {
        Some(b'.') => 0,
        _ => crate::swar::find_pair(path, b'/', b'.').unwrap_or(end),
    };
    let (mut read, mut write) = (untouched, untouched);
    while read < end {
        let input = &path[read..end];
        if input.starts_with(b"../") {
            // 2A
            read += 3;
        } else if input.starts_with(b"./") || input.starts_with(b"/./") {
            // 2A, and 2B (the input keeps the second `/`)
            read += 2;
        } else if input == b"/." {
            // 2B at the end: the input becomes "/"
            read += 1;
            path[read] = b'/';
        } else if input.starts_with(b"/../") || input == b"/.." {
            // 2C: the input becomes "/…"; the output loses its last segment
            if input.len() == 3 {
                read += 2;
                path[read] = b'/';
            } else {
                read += 3;
            }
            write = path[..write].iter().rposition(|&b| b == b'/').unwrap_or(0);
        } else if input == b"." || input == b".." {
            // 2D
            read = end;
        } else {
            // 2E: move the first segment, with its leading `/` if any
            let from = read + usize::from(input[0] == b'/');
            let segment_end = path[from..end]
                .iter()
                .position(|&b| b == b'/')
                .map_or(end, |n| from + n);
            if write != read {
                path.copy_within(read..segment_end, write);
            }
            write += segment_end - read;
            read = segment_end;
        }
    }
    debug_assert!(write <= end);
    write
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A direct transcription of §5.2.4 over owned strings: the oracle.
    fn naive_remove_dot_segments(path: &str) -> String {
        let mut input = path.to_string();
        let mut output = String::new();
        while !input.is_empty() {
            if let Some(rest) = input.strip_prefix("../").or(input.strip_prefix("./")) {
                input = rest.to_string();
            } else if input.starts_with("/./") || input == "/." {
                input = format!("/{}", &input[input.len().min(3)..]);
            } else if input.starts_with("/../") || input == "/.." {
                input = format!("/{}", &input[input.len().min(4)..]);
                output.truncate(output.rfind('/').unwrap_or(0));
            } else if input == "." || input == ".." {
                input.clear();
            } else {
                let from = usize::from(input.starts_with('/'));
                let end = input[from..].find('/').map_or(input.len(), |n| from + n);
                output.push_str(&input[..end]);
                input = input[end..].to_string();
            }
        }
        output
    }

    #[test]
    fn in_place_agrees_with_the_naive_transcription() {
        let atoms = ["", ".", "..", "a", "b.", ".c", "..."];
        // Every path of up to four segments drawn from the atoms, rooted or not.
        let mut paths = vec![String::new()];
        for _ in 0..4 {
            let mut longer = Vec::new();
            for p in &paths {
                for a in atoms {
                    longer.push(format!("{p}/{a}"));
                    longer.push(format!("{p}{a}/"));
                    longer.push(format!("{p}{a}"));
                }
            }
            paths.extend(longer);
            paths.sort();
            paths.dedup();
        }
        for path in &paths {
            let mut buf = b"prefix".to_vec();
            buf.extend_from_slice(path.as_bytes());
            remove_dot_segments(&mut buf, 6);
            assert_eq!(&buf[..6], b"prefix");
            assert_eq!(
                std::str::from_utf8(&buf[6..]).unwrap(),
                naive_remove_dot_segments(path),
                "{path:?}"
            );
        }
    }

    #[test]
    fn relative_base_is_an_error() {
        let err = resolve("/a/b", "c").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::RelativeBase);
    }

    #[test]
    fn non_strict_reads_same_scheme_as_relative() {
        let base = UriRef::parse("http://a/b/c/d;p?q").unwrap();
        let reference = UriRef::parse("HTTP:g").unwrap();
        let mut out = Vec::new();
        resolve_into(&base, &reference, SchemeRule::NonStrict, &mut out).unwrap();
        assert_eq!(out, b"http://a/b/c/g");
    }

    #[test]
    fn double_slash_path_without_authority_still_reparses() {
        let target = resolve("scheme:/a", "/..//x").unwrap();
        assert_eq!(target, "scheme:/.//x");
        let reparsed = UriRef::parse(&target).unwrap();
        assert_eq!((reparsed.authority(), reparsed.path()), (None, "/.//x"));
    }
}
