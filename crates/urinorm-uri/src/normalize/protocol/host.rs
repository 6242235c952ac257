//! The protocol rung's work on a host name: the root dot, `www.`, and the
//! numeric forms of §7.4.
//!
//! It knows host names as bytes and the Public Suffix List; not URIs.

use crate::host::parse_numeric_ipv4;

/// The root `.` at the end of a host name (`example.com.`), only the one:
/// `a..` ends in an empty label, not in a root, and stays as it is (so the
/// result is a fixed point: `a..` never becomes `a.` and then `a`).
pub(super) fn drop_root_dot(out: &mut Vec<u8>, host_start: usize) -> bool {
    let host = &out[host_start..];
    let root = host.len() > 1 && host.ends_with(b".") && !host.ends_with(b"..");
    if root {
        out.pop();
    }
    root
}

/// `www.` as the first label, when what remains is a registrable domain
/// or below one by the Public Suffix List (`www.bbc.co.uk` → `bbc.co.uk`,
/// `www.foo.github.io` → `foo.github.io`; `www.co.uk` and `www.com` stay,
/// `co.uk` and `com` being public suffixes) and does not read as a number
/// (`www.1.2.3` stays: browsers would take `1.2.3` for an address).
/// `www2.` and `www1355544.` are other labels, untouched.
pub(super) fn strip_www(out: &mut Vec<u8>, host_start: usize) -> bool {
    let list = crate::domain::suffix_list();
    let mut changed = false;
    // `www.www.example.com` loses both: a fixed point needs every one.
    while let Some(rest) = out[host_start..].strip_prefix(b"www.") {
        if list.registrable_domain(rest).is_none() || crate::domain::ends_in_number(rest) {
            break;
        }
        out.drain(host_start..host_start + 4);
        changed = true;
    }
    changed
}

/// RFC 3986 §7.4: the numeric host forms that resolvers accept (decimal,
/// octal with a leading 0, hex with 0x; one to four parts, the last filling
/// the remaining bytes), written as the dotted-decimal address. Anything
/// that is not exactly such a form stays a reg-name.
pub(super) fn ipv4_numeric(out: &mut Vec<u8>, host_start: usize) -> bool {
    let Some(address) = parse_numeric_ipv4(&out[host_start..]) else {
        return false;
    };
    let dotted = std::net::Ipv4Addr::from(address).to_string();
    if out[host_start..] == *dotted.as_bytes() {
        return false;
    }
    out.truncate(host_start);
    out.extend_from_slice(dotted.as_bytes());
    true
}
