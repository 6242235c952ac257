//! SURT keys (Sort-friendly URI Reordering Transform), the key format of web
//! archive CDX indexes: `http://www.example.com:8080/a?b` → `com,example,www:8080)/a?b`.
//!
//! As in the Internet Archive's default form, the scheme and the userinfo are
//! left out (so `http` and `https` share keys), the host's labels are
//! reversed and joined by `,`, an IP address is kept as written, and a URI
//! without a host is its own key. What else merges is the rung's business:
//! the key is made from the canonical form, byte for byte.
//!
//! It knows the key's layout; what the canonical form is, is the normalizer's.

use std::cell::RefCell;

use crate::error::InvalidUri;
use crate::normalize::{Changes, Normalizer};
use crate::uri::{HostKind, UriRef};

thread_local! {
    /// The canonical form a key is made from: reused, so that no key allocates.
    static CANONICAL: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Appends the SURT key of `input`'s canonical form under `normalizer`: the
/// key `--key surt` writes. On error `out` is left as it was.
///
/// ```
/// use urinorm::normalize::{Normalizer, Rung};
/// use urinorm::surt::normalize_surt_into;
/// let mut out = Vec::new();
/// normalize_surt_into(&Normalizer::new(Rung::Scheme), b"HTTP://WWW.Example.com:80/a", &mut out)?;
/// assert_eq!(out, b"com,example,www)/a");
/// # Ok::<(), urinorm::InvalidUri>(())
/// ```
pub fn normalize_surt_into(
    normalizer: &Normalizer,
    input: &[u8],
    out: &mut Vec<u8>,
) -> Result<Changes, InvalidUri> {
    CANONICAL.with_borrow_mut(|canonical| {
        canonical.clear();
        let changes = normalizer.normalize_into(input, canonical)?;
        let uri = UriRef::parse_bytes(canonical).expect("canonical forms are valid references");
        write_surt(&uri, out);
        Ok(changes)
    })
}

/// Appends the SURT key of `uri` to `out`.
///
/// ```
/// use urinorm::{UriRef, surt::write_surt};
/// let mut out = Vec::new();
/// write_surt(&UriRef::parse("http://www.example.com:8080/a?b#c")?, &mut out);
/// assert_eq!(out, b"com,example,www:8080)/a?b#c");
/// out.clear();
/// write_surt(&UriRef::parse("dns:example.com")?, &mut out);
/// assert_eq!(out, b"dns:example.com");
/// # Ok::<(), urinorm::InvalidUri>(())
/// ```
pub fn write_surt(uri: &UriRef<'_>, out: &mut Vec<u8>) {
    let (Some(host), Some(kind)) = (uri.host(), uri.host_kind()) else {
        out.extend_from_slice(uri.as_str().as_bytes());
        return;
    };
    if host.is_empty() {
        out.extend_from_slice(uri.as_str().as_bytes());
        return;
    }
    if kind == HostKind::RegName {
        for (i, label) in host.rsplit('.').enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(label.as_bytes());
        }
    } else {
        out.extend_from_slice(host.as_bytes());
    }
    if let Some(port) = uri.port() {
        out.push(b':');
        out.extend_from_slice(port.as_bytes());
    }
    out.push(b')');
    out.extend_from_slice(uri.path().as_bytes());
    if let Some(query) = uri.query() {
        out.push(b'?');
        out.extend_from_slice(query.as_bytes());
    }
    if let Some(fragment) = uri.fragment() {
        out.push(b'#');
        out.extend_from_slice(fragment.as_bytes());
    }
}
