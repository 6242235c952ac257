//! Where a reference's components stand: what the parser finds, what a
//! normalizer records of the form it wrote, and what a [`UriRef`] reads,
//! so that neither the parser nor the normalizer builds a `UriRef` by hand
//! (one constructor, [`UriRef::from_offsets`], checks them).
//!
//! It knows positions and the delimiters at them; not how they were found.
//!
//! [`UriRef`]: crate::UriRef
//! [`UriRef::from_offsets`]: crate::UriRef

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

/// Where the authority's parts stand. The authority ends where the path starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AuthorityPos {
    /// First byte after `//`.
    pub start: usize,
    /// Index of the `@` ending the userinfo, when there is one.
    pub userinfo_end: Option<usize>,
    /// The host's bytes, brackets included for an IP literal.
    pub host: (usize, usize),
    /// First byte after the `:` that starts the port, when there is one.
    pub port_start: Option<usize>,
    pub host_kind: HostKind,
}

/// The positions of a reference's components in its text.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offsets {
    /// Index of the `:` that ends the scheme.
    pub scheme_end: Option<usize>,
    pub authority: Option<AuthorityPos>,
    /// The path's bytes: it starts where the authority ends.
    pub path: (usize, usize),
    /// First byte after the `?`; the query runs to the fragment's `#` or the end.
    pub query_start: Option<usize>,
    /// First byte after the `#`; the fragment runs to the end.
    pub fragment_start: Option<usize>,
    /// Whether any component holds a `%XX` triplet.
    pub has_percent: bool,
}

impl Offsets {
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
        let mut at = 0;
        if let Some(end) = self.scheme_end {
            holds(text.get(end) == Some(&b':'), "the scheme ends at its ':'")?;
            at = end + 1;
        }
        if let Some(a) = self.authority {
            holds(
                text.get(at..a.start) == Some(&b"//"[..]),
                "'//' opens the authority",
            )?;
            let host_from = match a.userinfo_end {
                Some(end) => {
                    holds(text.get(end) == Some(&b'@'), "the userinfo ends at its '@'")?;
                    end + 1
                }
                None => a.start,
            };
            holds(a.host.0 == host_from, "the host follows the userinfo")?;
            holds(a.host.0 <= a.host.1, "the host is in order")?;
            at = match a.port_start {
                Some(port) => {
                    holds(port == a.host.1 + 1, "the port follows the host")?;
                    holds(text.get(a.host.1) == Some(&b':'), "':' opens the port")?;
                    port
                }
                None => a.host.1,
            };
            holds(self.path.0 >= at, "the path starts after the authority")?;
            if a.port_start.is_none() {
                holds(self.path.0 == at, "the path starts where the host ends")?;
            }
        }
        holds(
            at <= self.path.0 && self.path.0 <= self.path.1,
            "the path is in order",
        )?;
        let mut end = self.path.1;
        if let Some(query) = self.query_start {
            holds(query == end + 1, "the query follows the path")?;
            holds(text.get(end) == Some(&b'?'), "'?' opens the query")?;
            end = query;
        }
        if let Some(fragment) = self.fragment_start {
            holds(fragment > end, "the fragment follows")?;
            holds(
                text.get(fragment - 1) == Some(&b'#'),
                "'#' opens the fragment",
            )?;
            end = fragment;
        }
        if self.fragment_start.is_none() && self.query_start.is_none() {
            holds(self.path.1 == text.len(), "the path runs to the end")?;
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
        assert!(moved(|o| o.scheme_end = Some(3)).is_err());
        assert!(moved(|o| o.query_start = Some(15)).is_err());
        assert!(moved(|o| o.authority.as_mut().unwrap().host.1 = 9).is_err());
        assert!(moved(|o| o.path.1 = 20).is_err());
        assert!(moved(|o| o.authority.as_mut().unwrap().userinfo_end = None).is_err());
    }
}
