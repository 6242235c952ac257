//! `UriRef`: a parsed URI reference as offsets over the caller's text, and §5.3 recomposition.
//!
//! It knows offsets and components, not how they were found (the parser)
//! or what they mean at a rung (the normalizers).

use std::fmt;

use crate::error::InvalidUri;
use crate::host::{parse_ipv4, parse_ipv6};
pub use crate::offsets::HostKind;
use crate::offsets::{HostTag, Offsets};

/// A valid URI reference (RFC 3986 §4.1), borrowed: every component is a
/// slice of the text it was parsed from, and nothing is allocated.
///
/// An undefined component is `None`; a defined but empty one is `Some("")`
/// (§5.3 keeps them apart, and so does every rung of urinorm).
///
/// ```
/// use urinorm_uri::UriRef;
/// let uri = UriRef::parse("foo://example.com:8042/over/there?name=ferret#nose")?;
/// assert_eq!(uri.scheme(), Some("foo"));
/// assert_eq!(uri.authority(), Some("example.com:8042"));
/// assert_eq!(uri.host(), Some("example.com"));
/// assert_eq!(uri.port(), Some("8042"));
/// assert_eq!(uri.path(), "/over/there");
/// assert_eq!(uri.query(), Some("name=ferret"));
/// assert_eq!(uri.fragment(), Some("nose"));
///
/// let bare = UriRef::parse("http://a?")?;
/// assert_eq!((bare.query(), bare.fragment()), (Some(""), None));
/// # Ok::<(), urinorm_uri::InvalidUri>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct UriRef<'a> {
    pub(crate) text: &'a str,
    /// Where its components stand in `text`.
    pub(crate) offsets: Offsets,
}

impl<'a> UriRef<'a> {
    /// Parses `text` as an RFC 3986 `URI-reference` (Appendix A). A text
    /// longer than `u32::MAX` bytes is [`ErrorKind::ReferenceTooLong`](crate::ErrorKind::ReferenceTooLong).
    pub fn parse(text: &'a str) -> Result<UriRef<'a>, InvalidUri> {
        UriRef::parse_bytes(text.as_bytes())
    }

    /// Parses bytes that may not be UTF-8; any non-ASCII byte is an error.
    pub fn parse_bytes(bytes: &'a [u8]) -> Result<UriRef<'a>, InvalidUri> {
        crate::parse::parse(bytes)
    }

    /// The reference `text` whose components stand at `offsets`: the one
    /// way a `UriRef` is made, from what the parser found or what a
    /// normalizer wrote. The offsets' invariants are checked in debug
    /// builds (and so in every test).
    pub(crate) fn from_offsets(text: &'a str, offsets: Offsets) -> UriRef<'a> {
        offsets.debug_check(text.as_bytes());
        UriRef { text, offsets }
    }

    /// The whole reference, as parsed.
    pub fn as_str(&self) -> &'a str {
        self.text
    }

    /// `scheme` (§3.1), without its `:`.
    pub fn scheme(&self) -> Option<&'a str> {
        self.offsets.scheme_end().map(|end| &self.text[..end])
    }

    /// `authority` (§3.2), without the leading `//`.
    pub fn authority(&self) -> Option<&'a str> {
        self.offsets
            .authority
            .map(|a| &self.text[a.start()..self.offsets.path().0])
    }

    /// `userinfo` (§3.2.1), without its `@`.
    pub fn userinfo(&self) -> Option<&'a str> {
        let a = self.offsets.authority?;
        a.userinfo_end().map(|end| &self.text[a.start()..end])
    }

    /// `host` (§3.2.2), brackets included for an IP literal; defined whenever
    /// the authority is, and possibly empty.
    pub fn host(&self) -> Option<&'a str> {
        self.offsets.authority.map(|a| {
            let (start, end) = a.host();
            &self.text[start..end]
        })
    }

    /// What kind of host the authority names. An IP address is read from
    /// the host's text at each call: the `UriRef` keeps only the kind, to
    /// stay small.
    pub fn host_kind(&self) -> Option<HostKind> {
        let tag = self.host_tag()?;
        let host = self.host()?.as_bytes();
        Some(match tag {
            HostTag::RegName => HostKind::RegName,
            HostTag::Ipv4 => {
                HostKind::Ipv4(parse_ipv4(host).expect("the parser read an IPv4address"))
            }
            HostTag::Ipv6 => HostKind::Ipv6(
                parse_ipv6(&host[1..host.len() - 1]).expect("the parser read an IPv6address"),
            ),
            HostTag::IpvFuture => HostKind::IpvFuture,
        })
    }

    /// What kind of host the authority names, without reading an address.
    pub(crate) fn host_tag(&self) -> Option<HostTag> {
        self.offsets.authority.map(|a| a.host_kind)
    }

    /// `port` (§3.2.3), without its `:`; `Some("")` for a `:` with no digits.
    pub fn port(&self) -> Option<&'a str> {
        let a = self.offsets.authority?;
        a.port_start()
            .map(|start| &self.text[start..self.offsets.path().0])
    }

    /// `path` (§3.3): always defined, possibly empty.
    pub fn path(&self) -> &'a str {
        let (start, end) = self.offsets.path();
        &self.text[start..end]
    }

    /// `query` (§3.4), without its `?`.
    pub fn query(&self) -> Option<&'a str> {
        let end = self
            .offsets
            .fragment_start()
            .map_or(self.text.len(), |f| f - 1);
        self.offsets
            .query_start()
            .map(|start| &self.text[start..end])
    }

    /// `fragment` (§3.5), without its `#`.
    pub fn fragment(&self) -> Option<&'a str> {
        self.offsets
            .fragment_start()
            .map(|start| &self.text[start..])
    }

    /// Whether any component holds a percent-encoded octet (§2.1).
    pub fn has_percent_encoding(&self) -> bool {
        self.offsets.has_percent
    }

    /// Whether this is a relative reference (§4.2): it has no scheme.
    pub fn is_relative(&self) -> bool {
        self.offsets.scheme_end.is_none()
    }

    /// The reference without its fragment: what §5.1 uses as a base URI.
    pub fn without_fragment(&self) -> &'a str {
        &self.text[..self
            .offsets
            .fragment_start()
            .map_or(self.text.len(), |f| f - 1)]
    }

    /// Recomposes the components as RFC 3986 §5.3 says, appending to `out`.
    ///
    /// For every reference the parser accepts this gives back the input bytes.
    ///
    /// ```
    /// let uri = urinorm_uri::UriRef::parse("s://u@h:1/p?q#f")?;
    /// let mut out = String::new();
    /// uri.recompose_into(&mut out);
    /// assert_eq!(out, "s://u@h:1/p?q#f");
    /// # Ok::<(), urinorm_uri::InvalidUri>(())
    /// ```
    pub fn recompose_into(&self, out: &mut String) {
        if let Some(scheme) = self.scheme() {
            out.push_str(scheme);
            out.push(':');
        }
        if let Some(authority) = self.authority() {
            out.push_str("//");
            out.push_str(authority);
        }
        out.push_str(self.path());
        if let Some(query) = self.query() {
            out.push('?');
            out.push_str(query);
        }
        if let Some(fragment) = self.fragment() {
            out.push('#');
            out.push_str(fragment);
        }
    }
}

impl fmt::Display for UriRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text)
    }
}

/// The scheme and host of a URI reference that is already known to be
/// valid (a canonical form), split as [`crate::split`] does: for what looks
/// at nothing else once a line (scope filters, per-site caps).
///
/// ```
/// use urinorm_uri::uri::SchemeHost;
/// let parts = SchemeHost::of_valid(b"http://user@[::1]:8080/a:b?c");
/// assert_eq!((parts.scheme, parts.host, parts.registered_name), (Some(&b"http"[..]), Some(&b"[::1]"[..]), false));
/// assert_eq!(SchemeHost::of_valid(b"mailto:a@b").host, None);
/// assert!(SchemeHost::of_valid(b"//Example.com:80").registered_name);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeHost<'a> {
    pub scheme: Option<&'a [u8]>,
    /// The host, when there is an authority (possibly empty).
    pub host: Option<&'a [u8]>,
    /// Whether the host is a `reg-name`, not an IP address or literal
    /// (first match wins, §3.2.2).
    pub registered_name: bool,
}

impl<'a> SchemeHost<'a> {
    pub fn of_valid(uri: &'a [u8]) -> SchemeHost<'a> {
        let head = crate::split::head(uri);
        let host = head.host.map(|h| &uri[h]);
        // An IPv4 address ends in a digit; most names do not.
        let address = |h: &[u8]| {
            h.starts_with(b"[")
                || (h.last().is_some_and(u8::is_ascii_digit)
                    && crate::host::parse_ipv4(h).is_some())
        };
        let registered_name = host.is_some_and(|h| !address(h));
        SchemeHost {
            scheme: head.scheme.map(|s| &uri[s]),
            host,
            registered_name,
        }
    }
}

/// The schemes a crawler fetches (what a frontier takes by default): those
/// of a resource named by a network host, over HTTP (RFC 9110 §4.2),
/// WebSocket (RFC 6455 §3) and FTP (RFC 1738 §3.2).
pub const CRAWLED_SCHEMES: [&str; 6] = ["http", "https", "ftp", "ftps", "ws", "wss"];

/// Why a URI is not one a crawler fetches ([`SchemeHost::fetchable`],
/// [`SchemeHost::crawled`]): it is a valid URI reference all the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unfetchable {
    /// A relative reference (no scheme, §4.2), which names nothing until
    /// resolved against a base.
    RelativeReference,
    /// An `http` or `https` URI without a host, which RFC 9110 §4.2.1 and
    /// §4.2.2 make invalid.
    HttpWithoutHost,
    /// A URI of a scheme other than [`CRAWLED_SCHEMES`] (`mailto:`,
    /// `javascript:`, `data:`, `tel:`, ...).
    NotCrawled,
}

impl Unfetchable {
    /// The reason as a sentence fragment.
    pub const fn reason(self) -> &'static str {
        match self {
            Unfetchable::RelativeReference => {
                "a relative reference, not a URI to fetch (it has no scheme)"
            }
            Unfetchable::HttpWithoutHost => {
                "an http(s) URI without a host cannot be fetched (RFC 9110 §4.2.1)"
            }
            Unfetchable::NotCrawled => "a URI of a scheme no crawler fetches",
        }
    }
}

impl fmt::Display for Unfetchable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

impl SchemeHost<'_> {
    /// Whether the URI is one a crawler fetches: [`SchemeHost::fetchable`],
    /// and of one of [`CRAWLED_SCHEMES`] (not `mailto:`, `javascript:`,
    /// `data:`, `tel:`, ...).
    ///
    /// ```
    /// use urinorm_uri::uri::{SchemeHost, Unfetchable};
    /// let crawled = |uri: &str| SchemeHost::of_valid(uri.as_bytes()).crawled();
    /// assert_eq!(crawled("HTTPS://example.com/"), Ok(()));
    /// assert_eq!(crawled("mailto:a@example.com"), Err(Unfetchable::NotCrawled));
    /// assert_eq!(crawled("../x"), Err(Unfetchable::RelativeReference));
    /// ```
    pub fn crawled(&self) -> Result<(), Unfetchable> {
        self.fetchable()?;
        let scheme = self.scheme.unwrap_or_default();
        match CRAWLED_SCHEMES
            .iter()
            .any(|s| scheme.eq_ignore_ascii_case(s.as_bytes()))
        {
            true => Ok(()),
            false => Err(Unfetchable::NotCrawled),
        }
    }

    /// Whether a crawler can fetch the URI: it has a scheme (a relative
    /// reference names nothing until resolved, RFC 3986 §4.2), and an
    /// `http` or `https` URI has a host that is not empty (RFC 9110
    /// §4.2.1: "A sender MUST NOT generate an "http" URI with an empty
    /// host identifier"; §4.2.2 for `https`). Other schemes are left to
    /// scope filters (`--keep-scheme`).
    ///
    /// ```
    /// use urinorm_uri::uri::{SchemeHost, Unfetchable};
    /// let fetchable = |uri: &str| SchemeHost::of_valid(uri.as_bytes()).fetchable();
    /// assert_eq!(fetchable("http://example.com/"), Ok(()));
    /// assert_eq!(fetchable("mailto:a@example.com"), Ok(()));
    /// assert_eq!(fetchable("www.example.com/"), Err(Unfetchable::RelativeReference));
    /// assert_eq!(fetchable("https:///"), Err(Unfetchable::HttpWithoutHost));
    /// assert_eq!(fetchable("http:foo"), Err(Unfetchable::HttpWithoutHost));
    /// ```
    pub fn fetchable(&self) -> Result<(), Unfetchable> {
        let Some(scheme) = self.scheme else {
            return Err(Unfetchable::RelativeReference);
        };
        let http = scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https");
        match http && self.host.is_none_or(<[u8]>::is_empty) {
            true => Err(Unfetchable::HttpWithoutHost),
            false => Ok(()),
        }
    }
}

/// The scheme and host of a reference already parsed.
impl<'a> From<&UriRef<'a>> for SchemeHost<'a> {
    fn from(uri: &UriRef<'a>) -> SchemeHost<'a> {
        SchemeHost {
            scheme: uri.scheme().map(str::as_bytes),
            host: uri.host().map(str::as_bytes),
            registered_name: uri.host_tag() == Some(HostTag::RegName),
        }
    }
}

/// `uri` with the password of its userinfo (after the first `:`) shown as
/// `****`, as RFC 3986 §7.5 asks of anything that displays a URI.
///
/// ```
/// assert_eq!(urinorm_uri::uri::mask_password("http://u:pw@h/"), "http://u:****@h/");
/// assert_eq!(urinorm_uri::uri::mask_password("http://u@h/"), "http://u@h/");
/// ```
pub fn mask_password(uri: &str) -> String {
    let Some(userinfo) = UriRef::parse(uri).ok().and_then(|u| u.userinfo()) else {
        return uri.to_string();
    };
    let Some(colon) = userinfo.find(':') else {
        return uri.to_string();
    };
    // The userinfo is a slice of `uri`: its offset is the pointers' distance.
    let start = userinfo.as_ptr() as usize - uri.as_ptr() as usize;
    format!(
        "{}****{}",
        &uri[..start + colon + 1],
        &uri[start + userinfo.len()..]
    )
}
