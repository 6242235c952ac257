//! The scheme rung (RFC 3986 §6.2.3): what each scheme's own specification
//! licenses, from a table: default ports, the empty path of HTTP-like
//! schemes, Internet host names to ASCII (UTS #46), and the case-insensitive
//! parts of `mailto:`, `urn:` and `file:`.

use idna::AsciiDenyList;

use super::syntax::decode_triplets;
use super::{Changes, Rule};
use crate::error::ErrorKind;
use crate::table::REG_NAME;

/// What urinorm knows of one scheme.
#[derive(Debug)]
pub struct Scheme {
    /// The scheme, lower case.
    pub name: &'static str,
    /// The port a URI of this scheme names when it names none.
    pub default_port: Option<u16>,
    /// Whether an empty path with an authority means `/` (RFC 9110 §4.2.3 for
    /// http and https; RFC 6455 §3 for ws and wss; RFC 1738 §3.2 for ftp).
    pub empty_path_is_root: bool,
    /// Whether the host is an Internet host name, so DNS and IDNA rules apply.
    pub internet_host: bool,
    /// Rules of its own beyond the table's columns.
    pub special: Special,
}

/// Schemes with a rule of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    None,
    /// RFC 8089 §2: `file://localhost/p` is `file:///p`.
    File,
    /// RFC 6068 §2 with RFC 5321 §2.4: the domain of each address is case-insensitive.
    Mailto,
    /// RFC 8141 §3.1: the namespace identifier is case-insensitive.
    Urn,
}

const fn internet(name: &'static str, port: u16, empty_path_is_root: bool) -> Scheme {
    Scheme {
        name,
        default_port: Some(port),
        empty_path_is_root,
        internet_host: true,
        special: Special::None,
    }
}

const fn special(name: &'static str, special: Special) -> Scheme {
    Scheme {
        name,
        default_port: None,
        empty_path_is_root: false,
        internet_host: false,
        special,
    }
}

/// The scheme table, most common first. Default ports are those of each
/// scheme's registration (IANA "Uniform Resource Identifier Schemes").
pub const SCHEMES: &[Scheme] = &[
    internet("https", 443, true),
    internet("http", 80, true),
    internet("wss", 443, true),
    internet("ws", 80, true),
    internet("ftp", 21, true),
    special("file", Special::File),
    special("mailto", Special::Mailto),
    special("urn", Special::Urn),
    internet("gopher", 70, false),
    internet("telnet", 23, false),
    internet("ldap", 389, false),
    internet("ldaps", 636, false),
    internet("nntp", 119, false),
    internet("news", 119, false),
    internet("imap", 143, false),
    internet("pop", 110, false),
    internet("rtsp", 554, false),
    internet("rtsps", 322, false),
    internet("sftp", 22, false),
    internet("ssh", 22, false),
    internet("git", 9418, false),
    internet("irc", 6667, false),
    internet("ircs", 6697, false),
    internet("coap", 5683, false),
    internet("coaps", 5684, false),
    internet("rsync", 873, false),
    internet("snmp", 161, false),
    internet("vnc", 5900, false),
    internet("wais", 210, false),
    internet("prospero", 1525, false),
    internet("nfs", 2049, false),
];

/// Whether `scheme` (as the scheme rung writes it: lower case) names the
/// web: what the protocol rung's transforms and site rules act on, each
/// with an authority (RFC 9110 §4.2, RFC 6455 §3).
pub fn is_web_scheme(scheme: &[u8]) -> bool {
    matches!(scheme, b"http" | b"https" | b"ws" | b"wss")
}

/// The table row of a lower-case scheme.
pub fn lookup(scheme: &[u8]) -> Option<&'static Scheme> {
    SCHEMES.iter().find(|s| s.name.as_bytes() == scheme)
}

/// Puts the host at `out[host_start..]` (already in its syntax-rung form) in
/// the form the scheme makes canonical.
/// `has_percent` says whether the reference holds any `%XX` at all.
pub fn canonical_host(
    out: &mut Vec<u8>,
    host_start: usize,
    scheme: &Scheme,
    has_percent: bool,
    changes: &mut Changes,
) -> Result<(), ErrorKind> {
    if scheme.special == Special::File && out[host_start..] == *b"localhost" {
        changes.add(Rule::FileLocalhost);
        out.truncate(host_start);
    }
    if scheme.internet_host && has_percent {
        host_to_ascii(out, host_start, changes)?;
    }
    Ok(())
}

/// §3.2.2: a registered name in percent-encoded UTF-8 is an internationalized
/// name; UTS #46 ToASCII gives its one ASCII spelling (done offline, no DNS).
///
/// A host already in ASCII is left as the syntax rung wrote it (lower case),
/// `xn--` labels included, even ones that are not valid Punycode: it is a
/// valid reg-name and may well resolve, and WHATWG URL does the same.
/// The mapped name must still be a reg-name (§3.2.2): a mapping that yields
/// `:` or a space, say, rejects the line.
fn host_to_ascii(
    out: &mut Vec<u8>,
    host_start: usize,
    changes: &mut Changes,
) -> Result<(), ErrorKind> {
    let host = &out[host_start..];
    if !host.contains(&b'%') {
        return Ok(());
    }
    let decoded = decode_non_ascii(host);
    if decoded.is_ascii() {
        // Only encoded reserved characters: not a DNS name, kept as the syntax rung wrote it.
        return Ok(());
    }
    let ascii = idna::domain_to_ascii_cow(&decoded, AsciiDenyList::EMPTY)
        .map_err(|_| ErrorKind::InvalidInternationalDomainName)?;
    if !ascii.bytes().all(|b| REG_NAME.allows(b)) {
        return Err(ErrorKind::InvalidInternationalDomainName);
    }
    changes.add(Rule::HostToAscii);
    let ascii = ascii.into_owned();
    out.truncate(host_start);
    out.extend_from_slice(ascii.as_bytes());
    Ok(())
}

/// Decodes the `%XX` triplets of bytes 0x80 and above (UTF-8 sequences).
fn decode_non_ascii(host: &[u8]) -> Vec<u8> {
    let mut decoded = host.to_vec();
    decode_triplets(&mut decoded, 0, |value| value >= 0x80);
    decoded
}

/// The port as §6.2.3 writes it for a scheme whose default port is
/// `default`: `None` when it is the default (dropped with its `:`), else
/// its digits without leading zeros (a port of a scheme in the table is a
/// number), a suffix of `port`.
pub(crate) fn canonical_port<'a>(
    port: &'a str,
    default: u16,
    changes: &mut Changes,
) -> Result<Option<&'a str>, ErrorKind> {
    let digits = port.trim_start_matches('0');
    let digits = if digits.is_empty() {
        &port[port.len() - 1..]
    } else {
        digits
    };
    if digits.len() != port.len() {
        changes.add(Rule::PortLeadingZeros);
    }
    let value: u16 = digits.parse().map_err(|_| ErrorKind::PortOutOfRange)?;
    if value == default {
        changes.add(Rule::DropDefaultPort);
        return Ok(None);
    }
    Ok(Some(digits))
}

/// Applies the scheme's own case rules to its path (they keep its length):
/// the domain of each `mailto:` address, the `urn:` namespace identifier.
pub(crate) fn lowercase_path_parts(path: &mut [u8], scheme: &Scheme, changes: &mut Changes) {
    match scheme.special {
        Special::Mailto => {
            for address in path.split_mut(|&b| b == b',') {
                if let Some(at) = address.iter().rposition(|&b| b == b'@')
                    && lowercase_outside_triplets(&mut address[at + 1..])
                {
                    changes.add(Rule::MailtoDomain);
                }
            }
        }
        Special::Urn => {
            let nid_end = path.iter().position(|&b| b == b':').unwrap_or(path.len());
            if lowercase_outside_triplets(&mut path[..nid_end]) {
                changes.add(Rule::UrnNamespace);
            }
        }
        Special::File | Special::None => {}
    }
}

/// Lower-cases letters except the hex digits of `%XX`; says whether any changed.
pub fn lowercase_outside_triplets(bytes: &mut [u8]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            i += 3;
            continue;
        }
        changed |= bytes[i].is_ascii_uppercase();
        bytes[i].make_ascii_lowercase();
        i += 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_lowercase_and_unique() {
        for (i, s) in SCHEMES.iter().enumerate() {
            assert_eq!(s.name, s.name.to_ascii_lowercase());
            assert!(SCHEMES[..i].iter().all(|t| t.name != s.name), "{}", s.name);
            assert!(!s.internet_host || s.default_port.is_some());
        }
    }

    #[test]
    fn lowercase_keeps_percent_hex() {
        let mut bytes = *b"Ex%C3%A9MPLE.org";
        assert!(lowercase_outside_triplets(&mut bytes));
        assert_eq!(&bytes, b"ex%C3%A9mple.org");
    }
}
