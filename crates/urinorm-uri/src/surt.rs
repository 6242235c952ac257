//! SURT keys (Sort-friendly URI Reordering Transform), the key format of web
//! archive CDX indexes: `http://www.example.com:8080/a?b` → `com,example,www:8080)/a?b`.
//!
//! As in the Internet Archive's default form, the scheme and the userinfo are
//! left out (so `http` and `https` share keys), the host's labels are
//! reversed and joined by `,`, an IP address is kept as written, and a URI
//! without a host is its own key. What else merges is the rung's business:
//! the key is made from the canonical form, byte for byte.
//!
//! Under the `cdx-spelling` transform (in the `ia` preset) keys are spelled
//! as the Internet Archive's CDX indexes spell them: what the canonical form
//! must keep encoded to be a URI and IA writes raw, raw; hex digits in lower
//! case; IPv4 addresses reversed like names.
//!
//! It knows the key's layout; what the canonical form is, is the normalizer's.

use crate::normalize::NormalizeError;
use crate::normalize::protocol::Transform;
use crate::normalize::{Changes, Normalizer, Scratch};
use crate::offsets::HostTag;
use crate::table::{Table, hex_value};
use crate::uri::UriRef;

/// How a key writes the canonical form's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spelling {
    /// As the canonical URI has them.
    Uri,
    /// As CDX indexes have them (the `cdx-spelling` transform).
    Cdx,
}

impl Spelling {
    /// The spelling `normalizer`'s keys get.
    pub fn of(normalizer: &Normalizer) -> Spelling {
        match normalizer.protocol() {
            Some(p) if p.contains(Transform::CdxSpelling) => Spelling::Cdx,
            _ => Spelling::Uri,
        }
    }
}

/// What IA writes raw that a URI path cannot hold (IA's minimal escape
/// leaves 0x21–0x7E alone but `#` and `%`).
const CDX_RAW_IN_PATH: Table = Table::of(b"\"<>[\\]^`{|}?");
/// The same in a query, where `?` is already raw.
const CDX_RAW_IN_QUERY: Table = Table::of(b"\"<>[\\]^`{|}");
/// A host name, whose encoded bytes stay encoded.
const CDX_RAW_IN_HOST: Table = Table::of(b"");

/// Appends the SURT key of `input`'s canonical form under `normalizer`: the
/// key `--key surt` writes. On error `out` is left as it was.
///
/// ```
/// use urinorm_uri::normalize::{Normalizer, Rung, Scratch};
/// use urinorm_uri::surt::normalize_surt_into;
/// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
/// let scheme = Normalizer::new(Rung::Scheme);
/// normalize_surt_into(&scheme, b"HTTP://WWW.Example.com:80/a", &mut out, &mut scratch)?;
/// assert_eq!(out, b"com,example,www)/a");
/// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
/// ```
pub fn normalize_surt_into(
    normalizer: &Normalizer,
    input: &[u8],
    out: &mut Vec<u8>,
    scratch: &mut Scratch,
) -> Result<Changes, NormalizeError> {
    // The canonical form is made in the scratch's own buffer, lent out of
    // it for the call that needs the rest of the scratch.
    let mut canonical = std::mem::take(&mut scratch.canonical);
    canonical.clear();
    let changes = normalizer.normalize_into(input, &mut canonical, scratch);
    if changes.is_ok() {
        let uri = UriRef::parse_bytes(&canonical).expect("canonical forms are valid references");
        write_surt_as(&uri, Spelling::of(normalizer), out);
    }
    scratch.canonical = canonical;
    changes
}

/// Appends the SURT key of `uri` to `out`.
///
/// ```
/// use urinorm_uri::{UriRef, surt::write_surt};
/// let mut out = Vec::new();
/// write_surt(&UriRef::parse("http://www.example.com:8080/a?b#c")?, &mut out);
/// assert_eq!(out, b"com,example,www:8080)/a?b#c");
/// out.clear();
/// write_surt(&UriRef::parse("dns:example.com")?, &mut out);
/// assert_eq!(out, b"dns:example.com");
/// # Ok::<(), urinorm_uri::InvalidUri>(())
/// ```
pub fn write_surt(uri: &UriRef<'_>, out: &mut Vec<u8>) {
    write_surt_as(uri, Spelling::Uri, out);
}

/// Appends the SURT key of `uri` to `out` in `spelling`.
///
/// ```
/// use urinorm_uri::{UriRef, surt::{Spelling, write_surt_as}};
/// let uri = UriRef::parse("http://10.0.0.1/caf%C3%A9%3F?a%5B%5D=1")?;
/// let mut out = Vec::new();
/// write_surt_as(&uri, Spelling::Cdx, &mut out);
/// assert_eq!(out, b"1,0,0,10)/caf%c3%a9??a[]=1");
/// # Ok::<(), urinorm_uri::InvalidUri>(())
/// ```
pub fn write_surt_as(uri: &UriRef<'_>, spelling: Spelling, out: &mut Vec<u8>) {
    let (Some(host), Some(kind)) = (uri.host(), uri.host_tag()) else {
        out.extend_from_slice(uri.as_str().as_bytes());
        return;
    };
    if host.is_empty() {
        out.extend_from_slice(uri.as_str().as_bytes());
        return;
    }
    // IA's SURT reverses IPv4 addresses too (`reverse_ipaddr`).
    let reversed = kind == HostTag::RegName || (spelling == Spelling::Cdx && kind == HostTag::Ipv4);
    if reversed {
        // The root's empty label (`summa.cash.`) is no label of the name's
        // own (RFC 1034 §3.1): reversed, it would lead the key with a comma.
        let host = host
            .strip_suffix('.')
            .filter(|h| !h.is_empty())
            .unwrap_or(host);
        for (i, label) in host.rsplit('.').enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_spelled(out, label.as_bytes(), spelling, &CDX_RAW_IN_HOST);
        }
    } else {
        out.extend_from_slice(host.as_bytes());
    }
    if let Some(port) = uri.port() {
        out.push(b':');
        out.extend_from_slice(port.as_bytes());
    }
    out.push(b')');
    push_spelled(out, uri.path().as_bytes(), spelling, &CDX_RAW_IN_PATH);
    if let Some(query) = uri.query() {
        out.push(b'?');
        push_spelled(out, query.as_bytes(), spelling, &CDX_RAW_IN_QUERY);
    }
    if let Some(fragment) = uri.fragment() {
        out.push(b'#');
        out.extend_from_slice(fragment.as_bytes());
    }
}

/// Appends `bytes`; in the CDX spelling, `%XX` of what `raw` holds as the
/// character and every other `%XX` with lower-case hex (IA lower-cases the
/// whole path and query after escaping).
fn push_spelled(out: &mut Vec<u8>, bytes: &[u8], spelling: Spelling, raw: &Table) {
    if spelling == Spelling::Uri || memchr::memchr(b'%', bytes).is_none() {
        out.extend_from_slice(bytes);
        return;
    }
    let mut at = 0;
    while at < bytes.len() {
        let triplet = match bytes.get(at..at + 3) {
            Some([b'%', hi, lo]) => hex_value(*hi).zip(hex_value(*lo)).map(|(h, l)| h << 4 | l),
            _ => None,
        };
        match triplet {
            Some(value) if raw.allows(value) => out.push(value),
            Some(_) => out.extend(bytes[at..at + 3].iter().map(u8::to_ascii_lowercase)),
            None => {
                out.push(bytes[at]);
                at += 1;
                continue;
            }
        }
        at += 3;
    }
}
