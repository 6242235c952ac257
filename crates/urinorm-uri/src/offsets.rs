//! Where a reference's components stand: what the parser finds, what a
//! normalizer records of the form it wrote, and what a [`UriRef`] reads,
//! so that neither the parser nor the normalizer builds a `UriRef` by hand
//! (one constructor, [`UriRef::from_offsets`], checks them).
//!
//! It knows positions and the delimiters at them; not how they were found.
//!
//! The positions are kept compact, as rust-url keeps its own: a `u32` each,
//! for a `UriRef` takes no text longer than `u32::MAX` bytes ([`fits`]),
//! and an optional one a [`NonZeroU32`] (none can be 0, see the fields),
//! so that absent costs no more than present. Of a host, only its kind is
//! kept; an IP address is read from the text when asked for
//! ([`UriRef::host_kind`]). A `UriRef` is then 64 bytes, one cache line,
//! where it was 168 with `usize`, `Option<usize>` and the eight pieces of
//! an IPv6 address: every line's reference is moved from the parser
//! through the rungs.
//!
//! [`UriRef`]: crate::UriRef
//! [`UriRef::from_offsets`]: crate::UriRef
//! [`UriRef::host_kind`]: crate::UriRef::host_kind

use std::num::NonZeroU32;

use crate::error::{ErrorKind, InvalidUri};

/// What kind of host an authority names (RFC 3986 §3.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostKind {
    /// `reg-name`: a registered name, possibly empty, possibly percent-encoded.
    RegName,
    /// `IPv4address` in strict dotted-decimal. First match wins: a host that
    /// matches this rule is an IPv4 address, never a reg-name (§3.2.2).
    Ipv4([u8; 4]),
    /// `IP-literal` holding an `IPv6address`: the eight 16-bit pieces.
    Ipv6([u16; 8]),
    /// `IP-literal` holding an `IPvFuture`.
    IpvFuture,
}

/// A [`HostKind`] without its address: what the offsets keep (the address
/// is in the text, and seldom asked for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostTag {
    RegName,
    Ipv4,
    Ipv6,
    IpvFuture,
}

/// Whether a text of `len` bytes fits the offsets: at most `u32::MAX`
/// bytes (4 GiB), far beyond any URI in use (the bulk engine's lines stop
/// at 64 KiB unless told otherwise). A longer one is
/// [`ErrorKind::ReferenceTooLong`] at its first byte past the limit. Checked
/// once a text, so that each position is then stored without a check.
pub(crate) fn fits(len: usize) -> Result<(), InvalidUri> {
    match u32::try_from(len) {
        Ok(_) => Ok(()),
        Err(_) => Err(InvalidUri::new(
            u32::MAX as usize,
            ErrorKind::ReferenceTooLong,
        )),
    }
}

/// A position as the offsets store it, in a text that [`fits`].
pub(crate) fn pos(index: usize) -> u32 {
    debug_assert!(fits(index).is_ok(), "position {index} past u32::MAX");
    index as u32
}

/// An optional position as the offsets store it: never 0, for each one
/// follows a delimiter or a scheme's first letter (see the fields).
pub(crate) fn mark(index: usize) -> NonZeroU32 {
    NonZeroU32::new(pos(index)).expect("a delimiter or a letter comes first")
}

/// A stored optional position as an index.
fn unmark(mark: NonZeroU32) -> usize {
    mark.get() as usize
}

/// Where the authority's parts stand. The authority ends where the path starts.
///
/// Its fields, as those of [`Offsets`], hold positions as stored, written
/// through [`pos`] and [`mark`]; its methods of the same names read them as
/// indices.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AuthorityPos {
    /// First byte after `//`.
    pub start: u32,
    /// Index of the `@` ending the userinfo, when there is one (after `//`,
    /// so never 0).
    pub userinfo_end: Option<NonZeroU32>,
    /// The host's bytes, brackets included for an IP literal.
    pub host: (u32, u32),
    /// First byte after the `:` that starts the port, when there is one
    /// (so never 0).
    pub port_start: Option<NonZeroU32>,
    pub host_kind: HostTag,
}

impl AuthorityPos {
    /// First byte after `//`.
    pub(crate) fn start(&self) -> usize {
        self.start as usize
    }

    /// Index of the `@` ending the userinfo, when there is one.
    pub(crate) fn userinfo_end(&self) -> Option<usize> {
        self.userinfo_end.map(unmark)
    }

    /// The host's bytes, brackets included for an IP literal.
    pub(crate) fn host(&self) -> (usize, usize) {
        (self.host.0 as usize, self.host.1 as usize)
    }

    /// First byte after the `:` that starts the port, when there is one.
    pub(crate) fn port_start(&self) -> Option<usize> {
        self.port_start.map(unmark)
    }
}

/// The positions of a reference's components in its text.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offsets {
    /// Index of the `:` that ends the scheme (after its first letter, so
    /// never 0).
    pub scheme_end: Option<NonZeroU32>,
    pub authority: Option<AuthorityPos>,
    /// The path's bytes: it starts where the authority ends.
    pub path: (u32, u32),
    /// First byte after the `?` (so never 0); the query runs to the
    /// fragment's `#` or the end.
    pub query_start: Option<NonZeroU32>,
    /// First byte after the `#` (so never 0); the fragment runs to the end.
    pub fragment_start: Option<NonZeroU32>,
    /// Whether any component holds a `%XX` triplet.
    pub has_percent: bool,
}

impl Offsets {
    /// Index of the `:` that ends the scheme.
    pub(crate) fn scheme_end(&self) -> Option<usize> {
        self.scheme_end.map(unmark)
    }

    /// The path's bytes.
    pub(crate) fn path(&self) -> (usize, usize) {
        (self.path.0 as usize, self.path.1 as usize)
    }

    /// First byte after the `?`.
    pub(crate) fn query_start(&self) -> Option<usize> {
        self.query_start.map(unmark)
    }

    /// First byte after the `#`.
    pub(crate) fn fragment_start(&self) -> Option<usize> {
        self.fragment_start.map(unmark)
    }

    /// Panics, in debug builds, unless the offsets describe `text` (see
    /// [`Offsets::check`]).
    pub(crate) fn debug_check(&self, text: &[u8]) {
        if cfg!(debug_assertions)
            && let Err(broken) = self.check(text)
        {
            panic!("offsets {self:?} do not describe {text:?}: {broken}");
        }
    }

    /// Whether the offsets describe `text` (RFC 3986 §3's layout): each
    /// delimiter where a component says it is, the components in order,
    /// none past the end; or the first invariant broken.
    pub(crate) fn check(&self, text: &[u8]) -> Result<(), &'static str> {
        let holds = |ok: bool, broken: &'static str| if ok { Ok(()) } else { Err(broken) };
        holds(fits(text.len()).is_ok(), "the text fits u32 positions")?;
        let (path_start, path_end) = self.path();
        let mut at = 0;
        if let Some(end) = self.scheme_end() {
            holds(text.get(end) == Some(&b':'), "the scheme ends at its ':'")?;
            at = end + 1;
        }
        if let Some(a) = self.authority {
            holds(
                text.get(at..a.start()) == Some(&b"//"[..]),
                "'//' opens the authority",
            )?;
            let host_from = match a.userinfo_end() {
                Some(end) => {
                    holds(text.get(end) == Some(&b'@'), "the userinfo ends at its '@'")?;
                    end + 1
                }
                None => a.start(),
            };
            let (host_start, host_end) = a.host();
            holds(host_start == host_from, "the host follows the userinfo")?;
            holds(host_start <= host_end, "the host is in order")?;
            at = match a.port_start() {
                Some(port) => {
                    holds(port == host_end + 1, "the port follows the host")?;
                    holds(text.get(host_end) == Some(&b':'), "':' opens the port")?;
                    port
                }
                None => host_end,
            };
            holds(path_start >= at, "the path starts after the authority")?;
            if a.port_start.is_none() {
                holds(path_start == at, "the path starts where the host ends")?;
            }
        }
        holds(
            at <= path_start && path_start <= path_end,
            "the path is in order",
        )?;
        let mut end = path_end;
        if let Some(query) = self.query_start() {
            holds(query == end + 1, "the query follows the path")?;
            holds(text.get(end) == Some(&b'?'), "'?' opens the query")?;
            end = query;
        }
        if let Some(fragment) = self.fragment_start() {
            holds(fragment > end, "the fragment follows")?;
            holds(
                text.get(fragment - 1) == Some(&b'#'),
                "'#' opens the fragment",
            )?;
            end = fragment;
        }
        if self.fragment_start.is_none() && self.query_start.is_none() {
            holds(path_end == text.len(), "the path runs to the end")?;
        }
        holds(end <= text.len(), "every component is in the text")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the parser finds holds the invariants, on every line of the
    /// sample (the normalizer's layouts are checked where they are made
    /// equal to a parse, in `normalize`).
    #[test]
    fn the_parser_s_offsets_describe_their_text() {
        let sample = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/sample/urls.txt"
        );
        let sample = std::fs::read(sample).unwrap();
        let extra: &[&[u8]] = &[b"", b"a", b"//", b"?#", b"s://u@[::1]:80/p?q#f", b"s:/./a?"];
        let mut parsed = 0;
        for line in sample.split(|&b| b == b'\n').chain(extra.iter().copied()) {
            if let Ok(uri) = crate::parse::parse(line) {
                let (text, offsets) = (uri.text, uri.offsets);
                assert_eq!(
                    offsets.check(text.as_bytes()),
                    Ok(()),
                    "{text}: {offsets:?}"
                );
                parsed += 1;
            }
        }
        assert!(parsed > 4900);
    }

    #[test]
    fn a_broken_offset_is_caught() {
        let uri = crate::parse::parse(b"http://u@h:80/p?q#f").unwrap();
        let (text, offsets) = (uri.text.as_bytes(), uri.offsets);
        let moved = |change: fn(&mut Offsets)| {
            let mut broken = offsets;
            change(&mut broken);
            broken.check(text)
        };
        assert!(moved(|o| o.scheme_end = Some(mark(3))).is_err());
        assert!(moved(|o| o.query_start = Some(mark(15))).is_err());
        assert!(moved(|o| o.authority.as_mut().unwrap().host.1 = 9).is_err());
        assert!(moved(|o| o.path.1 = 20).is_err());
        assert!(moved(|o| o.authority.as_mut().unwrap().userinfo_end = None).is_err());
    }

    /// What the module doc promises: a reference and its offsets in one
    /// cache line.
    #[test]
    fn a_uri_ref_takes_64_bytes() {
        assert_eq!(size_of::<Offsets>(), 48);
        assert_eq!(size_of::<crate::UriRef<'_>>(), 64);
    }

    #[test]
    fn positions_up_to_u32_max_are_kept_and_no_text_beyond_fits() {
        let last = u32::MAX as usize;
        for index in [1, 2, 255, 65_536, last - 1, last] {
            assert_eq!(pos(index) as usize, index);
            assert_eq!(unmark(mark(index)), index);
        }
        assert_eq!(pos(0), 0);
        assert_eq!(fits(last), Ok(()));
        let too_long = fits(last + 1).unwrap_err();
        assert_eq!(too_long.kind(), ErrorKind::ReferenceTooLong);
        assert_eq!(too_long.offset(), last);
    }

    /// The offsets of `text` as read by hand: Appendix B's regular
    /// expression (`^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?`)
    /// for the components, §3.2 for the authority's parts, each position an
    /// index. For a valid reference only.
    #[allow(clippy::type_complexity)]
    fn by_hand(
        text: &str,
    ) -> (
        Option<usize>,
        Option<(usize, Option<usize>, (usize, usize), Option<usize>)>,
        (usize, usize),
        Option<usize>,
        Option<usize>,
    ) {
        let end_of =
            |from: usize, stops: &[char]| text[from..].find(stops).map_or(text.len(), |n| from + n);
        let scheme_end = text
            .find([':', '/', '?', '#'])
            .filter(|&n| n > 0 && text[n..].starts_with(':'));
        let mut at = scheme_end.map_or(0, |n| n + 1);
        let authority = text[at..].starts_with("//").then(|| {
            let start = at + 2;
            at = end_of(start, &['/', '?', '#']);
            let userinfo_end = text[start..at].find('@').map(|n| start + n);
            let host_start = userinfo_end.map_or(start, |n| n + 1);
            let host_end = match text[host_start..].starts_with('[') {
                true => end_of(host_start, &[']']) + 1,
                false => end_of(host_start, &[':', '/', '?', '#']),
            };
            let port_start = (host_end < at).then_some(host_end + 1);
            (start, userinfo_end, (host_start, host_end), port_start)
        });
        let path = (at, end_of(at, &['?', '#']));
        let query_start = text[path.1..].starts_with('?').then_some(path.1 + 1);
        let fragment_start = text.find('#').map(|n| n + 1);
        (scheme_end, authority, path, query_start, fragment_start)
    }

    /// The compact offsets give back every position the parser found: as
    /// read by hand, and the host's kind with its address read again.
    fn assert_kept(text: &str) {
        let Ok(uri) = crate::UriRef::parse(text) else {
            return;
        };
        let o = uri.offsets;
        let authority = o
            .authority
            .map(|a| (a.start(), a.userinfo_end(), a.host(), a.port_start()));
        assert_eq!(
            (
                o.scheme_end(),
                authority,
                o.path(),
                o.query_start(),
                o.fragment_start()
            ),
            by_hand(text),
            "{text}"
        );
        let host = uri.host().map(str::as_bytes);
        let address = |h: &[u8]| match h.first() {
            Some(b'[') if h[1].eq_ignore_ascii_case(&b'v') => HostKind::IpvFuture,
            Some(b'[') => HostKind::Ipv6(crate::host::parse_ipv6(&h[1..h.len() - 1]).unwrap()),
            _ => crate::host::parse_ipv4(h).map_or(HostKind::RegName, HostKind::Ipv4),
        };
        assert_eq!(uri.host_kind(), host.map(address), "{text}");
    }

    #[test]
    fn the_sample_s_positions_are_kept() {
        let sample = include_str!("../../../testdata/sample/urls.txt");
        let extra = [
            "",
            "s:",
            "//",
            "?#",
            "s://u@[::1]:80/p?q#f",
            "//[v7.A]:",
            "//1.2.3.4:8/",
        ];
        for line in sample.lines().chain(extra) {
            assert_kept(line);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        #[test]
        fn parsed_positions_are_kept(text in "([a-zA-Z][a-z0-9+.-]{0,4}:)?(//([a-z0-9:]{0,3}@)?([a-z0-9.]{0,8}|1\\.2\\.3\\.[0-9]{1,3}|\\[[0-9a-f:.]{2,12}\\]|\\[[vV][0-9]\\.[a-z:]{1,3}\\])(:[0-9]{0,3})?)?(/[a-z0-9.:@]{0,4}){0,3}(\\?[a-z=&/?]{0,6})?(#[a-z/?]{0,4})?") {
            assert_kept(&text);
        }
    }
}
