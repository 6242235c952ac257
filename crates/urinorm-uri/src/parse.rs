//! The RFC 3986 `URI-reference` parser: bytes in, a [`UriRef`] (the text and
//! its offsets) out, one pass, no allocation.
//!
//! The grammar of Appendix A is applied component by component (§3): scheme,
//! then `//` authority, then path, query and fragment. Each component is one
//! scan over a byte table from [`crate::table`] that stops at the first byte
//! the component cannot hold; that byte is either the delimiter that starts
//! the next component or the error.
//!
//! It knows the grammar only: nothing of normalization, files or threads.

use memchr::{memchr, memchr3};

use crate::error::{Component, ErrorKind, InvalidUri};
use crate::host::{is_ipvfuture, parse_ipv4, parse_ipv6};
use crate::offsets::{AuthorityPos, HostTag, Offsets, fits, mark, pos};
use crate::simd::Class;
use crate::table::{ALPHA, PATH, QUERY, REG_NAME, SCHEME, USERINFO, hex_value};
use crate::uri::UriRef;

/// The component classes, as the scans read them.
static PATH_CLASS: Class = Class::new(PATH);
static QUERY_CLASS: Class = Class::new(QUERY);
static REG_NAME_CLASS: Class = Class::new(REG_NAME);
static USERINFO_CLASS: Class = Class::new(USERINFO);

/// Parses `bytes` as a `URI-reference` (§4.1): the text (ASCII, so UTF-8)
/// and where its components stand; a text longer than the offsets count
/// ([`fits`]) is an error before any byte is read.
pub(crate) fn parse(bytes: &[u8]) -> Result<UriRef<'_>, InvalidUri> {
    fits(bytes.len())?;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("ssse3") {
        // SAFETY: the CPU has SSSE3, as just checked.
        return unsafe { parse_ssse3(bytes) };
    }
    parse_any(bytes)
}

/// [`parse_any`] compiled for SSSE3: the scans' sixteen-byte classification
/// ([`Class::run_len`]) is then inlined into them, not called once a scan.
///
/// # Safety
///
/// The CPU has SSSE3 (`is_x86_feature_detected!("ssse3")`): the code is
/// compiled to use its instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "ssse3")]
unsafe fn parse_ssse3(bytes: &[u8]) -> Result<UriRef<'_>, InvalidUri> {
    parse_any(bytes)
}

/// The parse itself, for any CPU.
#[inline(always)]
fn parse_any(bytes: &[u8]) -> Result<UriRef<'_>, InvalidUri> {
    // §3.1: a scheme is a letter, then scheme bytes, then `:`. Anything else
    // makes this a relative reference (§4.2).
    let scheme_end = match bytes.first() {
        Some(&b) if ALPHA.allows(b) => {
            let end = 1 + bytes[1..].iter().take_while(|&&b| SCHEME.allows(b)).count();
            (bytes.get(end) == Some(&b':')).then_some(end)
        }
        _ => None,
    };
    let mut i = scheme_end.map_or(0, |end| end + 1);
    let mut saw_percent = false;

    let authority = if bytes[i..].starts_with(b"//") {
        let (authority, end) = parse_authority(bytes, i + 2, &mut saw_percent)?;
        i = end;
        Some(authority)
    } else {
        None
    };

    let path_start = i;
    i = scan(bytes, i, &PATH_CLASS, &mut saw_percent)?;
    let path = (path_start, i);
    if scheme_end.is_none() && authority.is_none() {
        check_first_segment(bytes, path)?;
    }

    let mut query_start = None;
    if bytes.get(i) == Some(&b'?') {
        query_start = Some(i + 1);
        i = scan(bytes, i + 1, &QUERY_CLASS, &mut saw_percent)?;
    }
    let mut fragment_start = None;
    if bytes.get(i) == Some(&b'#') {
        fragment_start = Some(i + 1);
        i = scan(bytes, i + 1, &QUERY_CLASS, &mut saw_percent)?;
    }
    if i < bytes.len() {
        let component = match (query_start, fragment_start) {
            (_, Some(_)) => Component::Fragment,
            (Some(_), None) => Component::Query,
            (None, None) => Component::Path,
        };
        return Err(unexpected(bytes, i, component));
    }

    // SAFETY: every byte was accepted by a table of ASCII bytes or is an ASCII
    // delimiter (`:`, `/`, `?`, `#`, `@`, `[`, `]`, `%` followed by hex
    // digits), so the input is ASCII and therefore UTF-8.
    let text = unsafe { std::str::from_utf8_unchecked(bytes) };
    let offsets = Offsets {
        scheme_end: scheme_end.map(mark),
        authority,
        path: (pos(path.0), pos(path.1)),
        query_start: query_start.map(mark),
        fragment_start: fragment_start.map(mark),
        has_percent: saw_percent,
    };
    Ok(UriRef::from_offsets(text, offsets))
}

/// Parses `authority = [ userinfo "@" ] host [ ":" port ]` (§3.2) from
/// `start`, the byte after `//`. Returns the positions and the authority's end.
#[inline(always)]
fn parse_authority(
    bytes: &[u8],
    start: usize,
    saw_percent: &mut bool,
) -> Result<(AuthorityPos, usize), InvalidUri> {
    match plain_authority(bytes, start, saw_percent) {
        Some(plain) => Ok(plain),
        None => full_authority(bytes, start, saw_percent),
    }
}

/// [`parse_authority`] for any authority: its end and its `@` found first.
fn full_authority(
    bytes: &[u8],
    start: usize,
    saw_percent: &mut bool,
) -> Result<(AuthorityPos, usize), InvalidUri> {
    // §3.2: the authority ends at the next `/`, `?` or `#`, or the end; `@`
    // cannot appear in userinfo, so the first one before that ends it.
    let end = memchr3(b'/', b'?', b'#', &bytes[start..]).map_or(bytes.len(), |n| start + n);
    let userinfo_end = memchr(b'@', &bytes[start..end]).map(|n| start + n);
    let host_start = match userinfo_end {
        Some(at) => {
            let stop = scan(bytes, start, &USERINFO_CLASS, saw_percent)?;
            if stop != at {
                return Err(unexpected(bytes, stop, Component::Userinfo));
            }
            at + 1
        }
        None => start,
    };

    let (host_end, host_kind) = if bytes.get(host_start) == Some(&b'[') {
        parse_ip_literal(bytes, host_start, end)?
    } else {
        let host_end = scan(bytes, host_start, &REG_NAME_CLASS, saw_percent)?;
        (host_end, reg_name_kind(&bytes[host_start..host_end]))
    };

    let port_start = match bytes.get(host_end) {
        _ if host_end == end => None,
        Some(b':') => {
            let digits = bytes[host_end + 1..end]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if host_end + 1 + digits != end {
                return Err(unexpected(bytes, host_end + 1 + digits, Component::Port));
            }
            Some(host_end + 1)
        }
        _ if matches!(host_kind, HostTag::Ipv6 | HostTag::IpvFuture) => {
            return Err(InvalidUri::new(host_end, ErrorKind::JunkAfterIpLiteral));
        }
        _ => return Err(unexpected(bytes, host_end, Component::Host)),
    };

    let authority = AuthorityPos {
        start: pos(start),
        userinfo_end: userinfo_end.map(mark),
        host: (pos(host_start), pos(host_end)),
        port_start: port_start.map(mark),
        host_kind,
    };
    Ok((authority, end))
}

/// The common authority, `reg-name [ ":" port ]` with no userinfo, found
/// by one scan of the name: it ends where the name (and the port's digits)
/// end, at a `/`, `?`, `#` or the end, without searching for those or for
/// an `@` first. `None` for any other authority, to be parsed in full (which
/// also finds its errors).
#[inline(always)]
fn plain_authority(
    bytes: &[u8],
    start: usize,
    saw_percent: &mut bool,
) -> Option<(AuthorityPos, usize)> {
    let mut host_percent = false;
    let host_end = scan(bytes, start, &REG_NAME_CLASS, &mut host_percent).ok()?;
    let (port_start, end) = match bytes.get(host_end) {
        Some(b':') => {
            let digits = bytes[host_end + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            (Some(host_end + 1), host_end + 1 + digits)
        }
        _ => (None, host_end),
    };
    if !matches!(bytes.get(end), None | Some(b'/' | b'?' | b'#')) {
        return None;
    }
    *saw_percent |= host_percent;
    let authority = AuthorityPos {
        start: pos(start),
        userinfo_end: None,
        host: (pos(start), pos(host_end)),
        port_start: port_start.map(mark),
        host_kind: reg_name_kind(&bytes[start..host_end]),
    };
    Some((authority, end))
}

/// The kind of a host that is no IP literal: `IPv4address` when it reads
/// as one, the first match winning over `reg-name` (§3.2.2).
pub(crate) fn reg_name_kind(host: &[u8]) -> HostTag {
    // Most names end in a letter: only one ending in a digit can be IPv4.
    match host
        .last()
        .filter(|b| b.is_ascii_digit())
        .and_then(|_| parse_ipv4(host))
    {
        Some(_) => HostTag::Ipv4,
        None => HostTag::RegName,
    }
}

/// Parses `IP-literal = "[" ( IPv6address / IPvFuture ) "]"` at `open`.
/// Returns the index after `]` and the kind.
fn parse_ip_literal(
    bytes: &[u8],
    open: usize,
    authority_end: usize,
) -> Result<(usize, HostTag), InvalidUri> {
    let close = memchr(b']', &bytes[open..authority_end])
        .map(|n| open + n)
        .ok_or(InvalidUri::new(open, ErrorKind::UnclosedIpLiteral))?;
    let inner = &bytes[open + 1..close];
    let kind = if inner.first().is_some_and(|b| b.eq_ignore_ascii_case(&b'v')) {
        if !is_ipvfuture(inner) {
            return Err(InvalidUri::new(open + 1, ErrorKind::InvalidIpvFuture));
        }
        HostTag::IpvFuture
    } else {
        // The pieces are read again when asked for (`UriRef::host_kind`).
        parse_ipv6(inner).ok_or(InvalidUri::new(open + 1, ErrorKind::InvalidIpv6))?;
        HostTag::Ipv6
    };
    Ok((close + 1, kind))
}

/// §4.2: a relative-path reference's first segment may not contain `:`
/// (`path-noscheme`), or it would read as a scheme.
fn check_first_segment(bytes: &[u8], (start, end): (usize, usize)) -> Result<(), InvalidUri> {
    let path = &bytes[start..end];
    let first_segment = &path[..memchr(b'/', path).unwrap_or(path.len())];
    match memchr(b':', first_segment) {
        Some(n) => Err(InvalidUri::new(start + n, ErrorKind::ColonInFirstSegment)),
        None => Ok(()),
    }
}

/// Scans from `i` over bytes of `class` and valid `pct-encoded` triplets
/// (§2.1). Returns the index of the first byte that is neither, and notes in
/// `saw_percent` whether it met a triplet.
#[inline(always)]
fn scan(
    bytes: &[u8],
    mut i: usize,
    class: &Class,
    saw_percent: &mut bool,
) -> Result<usize, InvalidUri> {
    loop {
        i += class.run_len(&bytes[i..]);
        if bytes.get(i) != Some(&b'%') {
            return Ok(i);
        }
        let hex = |n: usize| bytes.get(i + n).is_some_and(|&h| hex_value(h).is_some());
        if !(hex(1) && hex(2)) {
            return Err(InvalidUri::new(i, ErrorKind::InvalidPercentEncoding));
        }
        *saw_percent = true;
        i += 3;
    }
}

/// The error for a byte that cannot stand at `i` in `component`.
fn unexpected(bytes: &[u8], i: usize, component: Component) -> InvalidUri {
    let kind = match bytes[i] {
        b' ' => ErrorKind::Space,
        0..=0x1f | 0x7f => ErrorKind::ControlCharacter,
        0x80.. => ErrorKind::NonAscii,
        b'[' | b']' => ErrorKind::BracketOutsideIpLiteral,
        b'#' if component == Component::Fragment => ErrorKind::SecondHash,
        _ if component == Component::Port => ErrorKind::PortNotANumber,
        _ => ErrorKind::DisallowedCharacter(component),
    };
    InvalidUri::new(i, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::{HostKind, UriRef};

    /// What a user gets from the parse: a `UriRef` to ask.
    fn parse(bytes: &[u8]) -> Result<UriRef<'_>, InvalidUri> {
        UriRef::parse_bytes(bytes)
    }

    fn kind_of(text: &[u8]) -> ErrorKind {
        parse(text).unwrap_err().kind()
    }

    #[test]
    fn components_and_undefined_versus_empty() {
        let uri = parse(b"http://a").unwrap();
        assert_eq!(
            (uri.query(), uri.fragment(), uri.port()),
            (None, None, None)
        );
        let uri = parse(b"http://@a:?#").unwrap();
        assert_eq!(uri.userinfo(), Some(""));
        assert_eq!(uri.port(), Some(""));
        assert_eq!((uri.query(), uri.fragment()), (Some(""), Some("")));
        let uri = parse(b"").unwrap();
        assert_eq!(
            (uri.scheme(), uri.authority(), uri.path()),
            (None, None, "")
        );
        let uri = parse(b"//").unwrap();
        assert_eq!((uri.authority(), uri.host()), (Some(""), Some("")));
        let uri = parse(b"urn:example:animal:ferret:nose").unwrap();
        assert_eq!(uri.scheme(), Some("urn"));
        assert_eq!(uri.path(), "example:animal:ferret:nose");
    }

    /// Where the one-scan authority answers, it answers as the full parse.
    fn assert_plain_authority_agrees(line: &[u8]) {
        let Some(start) = line.windows(2).position(|w| w == b"//").map(|at| at + 2) else {
            return;
        };
        let (mut plain_percent, mut full_percent) = (false, false);
        if let Some(plain) = plain_authority(line, start, &mut plain_percent) {
            let full = full_authority(line, start, &mut full_percent);
            assert_eq!(
                format!("{:?}", Ok::<_, InvalidUri>(plain)),
                format!("{full:?}")
            );
            assert_eq!(plain_percent, full_percent, "{line:?}");
        }
    }

    #[test]
    fn the_plain_authority_agrees_with_the_full_parse_on_the_sample() {
        let sample = include_str!("../../../testdata/sample/urls.txt");
        let extra = [
            "http://a:80:90/",
            "http://u:1@h/",
            "http://h@",
            "http://%41:/",
            "http://",
            "//1.2.3.4:x",
        ];
        for line in sample.lines().chain(extra) {
            assert_plain_authority_agrees(line.as_bytes());
        }
    }

    proptest::proptest! {
        #[test]
        fn the_plain_authority_agrees_with_the_full_parse(line in "//[a-zA-Z0-9.%:@\\[\\]|/?#]{0,16}") {
            assert_plain_authority_agrees(line.as_bytes());
        }
    }

    /// A text longer than the offsets count is refused before a byte is
    /// read: the zeroed buffer is never touched, so its 4 GiB stay virtual.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_reference_longer_than_u32_max_is_refused() {
        let huge = vec![0u8; u32::MAX as usize + 1];
        let err = parse(&huge).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ReferenceTooLong);
        assert_eq!(err.offset(), u32::MAX as usize);
        assert_eq!(
            err.to_string(),
            "URI reference longer than 4 GiB (u32::MAX bytes), the most urinorm parses at byte 4294967295"
        );
    }

    #[test]
    fn first_match_wins_for_ipv4() {
        let host_kind = |t: &str| parse(t.as_bytes()).unwrap().host_kind().unwrap();
        assert_eq!(host_kind("http://1.2.3.4/"), HostKind::Ipv4([1, 2, 3, 4]));
        assert_eq!(host_kind("http://1.2.3.256/"), HostKind::RegName);
        assert_eq!(host_kind("http://01.2.3.4/"), HostKind::RegName);
        assert_eq!(
            host_kind("http://[::1]/"),
            HostKind::Ipv6([0, 0, 0, 0, 0, 0, 0, 1])
        );
        assert_eq!(host_kind("http://[v1.x]/"), HostKind::IpvFuture);
    }

    #[test]
    fn errors_name_offset_and_reason() {
        let err = parse(b"http://a/b c").unwrap_err();
        assert_eq!((err.offset(), err.kind()), (10, ErrorKind::Space));
        assert_eq!(kind_of(b"http://a/%"), ErrorKind::InvalidPercentEncoding);
        assert_eq!(kind_of(b"http://a/%4"), ErrorKind::InvalidPercentEncoding);
        assert_eq!(kind_of(b"http://a/%4g"), ErrorKind::InvalidPercentEncoding);
        assert_eq!(kind_of(b"http://a:8o/"), ErrorKind::PortNotANumber);
        assert_eq!(kind_of(b"http://a:1:2/"), ErrorKind::PortNotANumber);
        assert_eq!(kind_of(b"http://a/["), ErrorKind::BracketOutsideIpLiteral);
        assert_eq!(kind_of(b"http://a[/"), ErrorKind::BracketOutsideIpLiteral);
        assert_eq!(kind_of(b"http://[::1/"), ErrorKind::UnclosedIpLiteral);
        assert_eq!(kind_of(b"http://[::1]x/"), ErrorKind::JunkAfterIpLiteral);
        assert_eq!(kind_of(b"http://[::g]/"), ErrorKind::InvalidIpv6);
        assert_eq!(kind_of(b"http://[v.x]/"), ErrorKind::InvalidIpvFuture);
        assert_eq!(kind_of(b"a:b#c#d"), ErrorKind::SecondHash);
        assert_eq!(kind_of(b"1a:b"), ErrorKind::ColonInFirstSegment);
        assert_eq!(kind_of(b"http://a/\xc3\xa9"), ErrorKind::NonAscii);
        assert_eq!(kind_of(b"http://a/\0"), ErrorKind::ControlCharacter);
        assert_eq!(
            kind_of(b"http://a@b@c/"),
            ErrorKind::DisallowedCharacter(Component::Host)
        );
        assert_eq!(
            kind_of(b"http://a|b@c/"),
            ErrorKind::DisallowedCharacter(Component::Userinfo)
        );
        assert_eq!(
            kind_of(b"http://a/<"),
            ErrorKind::DisallowedCharacter(Component::Path)
        );
        assert_eq!(
            kind_of(b"http://a/?<"),
            ErrorKind::DisallowedCharacter(Component::Query)
        );
        assert_eq!(
            kind_of(b"http://a^b/"),
            ErrorKind::DisallowedCharacter(Component::Host)
        );
    }
}
