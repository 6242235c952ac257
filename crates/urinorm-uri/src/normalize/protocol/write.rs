//! The protocol rung's writer: the scheme-rung form of a URI copied once,
//! component by component, each transform that is on applied to the
//! component it works on, in the catalogue's order.
//!
//! It knows how the transforms rewrite; not which are on or why.

use super::host::{drop_root_dot, ipv4_numeric, strip_www};
use super::path::{collapse_slashes, drop_index_file, wants_trailing_slash};
use super::session::{drop_path_session_ids, is_session_param};
use super::{Protocol, Transform, ia, is_web, param_name};
use crate::normalize::scheme::{self, Scheme, lowercase_outside_triplets};
use crate::normalize::syntax::decode_triplets;
use crate::offsets::HostTag;
use crate::uri::UriRef;

impl Protocol {
    /// Appends the protocol form of `uri` (which is in its scheme-rung form)
    /// to `out`; returns the transforms that changed it, as rule flags.
    pub(crate) fn write(&self, uri: &UriRef<'_>, out: &mut Vec<u8>, scratch: &mut Scratch) -> u32 {
        let start = out.len();
        let mut fired = 0u32;
        let web = is_web(uri);
        let on = |t: Transform| web && self.contains(t);
        let mut note = |t: Transform, changed: bool| {
            if changed {
                fired |= t.bit();
            }
        };

        let mut scheme_name = uri.scheme().unwrap_or_default();
        if on(Transform::HttpsUpgrade) && matches!(scheme_name, "http" | "ws") {
            scheme_name = if scheme_name == "http" {
                "https"
            } else {
                "wss"
            };
            note(Transform::HttpsUpgrade, true);
        }
        if uri.scheme().is_some() {
            out.extend_from_slice(scheme_name.as_bytes());
            out.push(b':');
        }

        if let Some(host) = uri.host() {
            out.extend_from_slice(b"//");
            if let Some(userinfo) = uri.userinfo() {
                if on(Transform::DropUserinfo) {
                    note(Transform::DropUserinfo, true);
                } else {
                    out.extend_from_slice(userinfo.as_bytes());
                    out.push(b'@');
                }
            }
            let host_start = out.len();
            out.extend_from_slice(host.as_bytes());
            if uri.host_tag() == Some(HostTag::RegName) {
                if on(Transform::HostTrailingDot) {
                    note(Transform::HostTrailingDot, drop_root_dot(out, host_start));
                }
                if on(Transform::HostDots) {
                    note(Transform::HostDots, ia::host_dots(out, host_start));
                }
                if on(Transform::StripWww) {
                    note(Transform::StripWww, strip_www(out, host_start));
                }
                if on(Transform::StripWwwDigits) {
                    note(
                        Transform::StripWwwDigits,
                        ia::strip_www_digits(out, host_start),
                    );
                }
                // After strip-www: `www.0.0` is numeric only without its `www.`.
                if on(Transform::Ipv4Numeric) {
                    note(Transform::Ipv4Numeric, ipv4_numeric(out, host_start));
                }
            }
            if let Some(port) = uri.port() {
                let default =
                    scheme::lookup(scheme_name.as_bytes()).and_then(|s: &Scheme| s.default_port);
                if on(Transform::HttpsUpgrade) && default.is_some_and(|d| port.parse() == Ok(d)) {
                    // After https-upgrade, http's explicit :443 is the default.
                    note(Transform::HttpsUpgrade, true);
                } else {
                    out.push(b':');
                    out.extend_from_slice(port.as_bytes());
                }
            }
        }

        let path_start = out.len();
        out.extend_from_slice(uri.path().as_bytes());
        if web {
            let has_authority = uri.authority().is_some();
            self.write_path(out, path_start, &mut note, has_authority, scratch);
        }

        if let Some(query) = uri.query() {
            let query_start = out.len();
            out.push(b'?');
            if web {
                self.write_query(query.as_bytes(), out, &mut note, scratch);
            } else {
                out.extend_from_slice(query.as_bytes());
            }
            if on(Transform::DropEmptyQuery) && out.len() == query_start + 1 {
                out.pop();
                note(Transform::DropEmptyQuery, true);
            }
        }
        if let Some(fragment) = uri.fragment() {
            if on(Transform::DropFragment) {
                note(Transform::DropFragment, true);
            } else {
                out.push(b'#');
                let fragment_start = out.len();
                out.extend_from_slice(fragment.as_bytes());
                if on(Transform::DecodeSafe) {
                    note(
                        Transform::DecodeSafe,
                        decode_safe(out, fragment_start, FRAGMENT_SAFE),
                    );
                }
            }
        }
        debug_assert!(out.len() >= start);
        fired
    }

    /// The path transforms, on `out[path_start..]`.
    fn write_path(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        note: &mut impl FnMut(Transform, bool),
        has_authority: bool,
        scratch: &mut Scratch,
    ) {
        if self.contains(Transform::DecodeRepeatedly) {
            let encoded = &mut scratch.encoded;
            note(
                Transform::DecodeRepeatedly,
                ia::decode_repeatedly(out, start, ia::Component::Path, encoded),
            );
        }
        if self.contains(Transform::DropSessionIds) {
            note(Transform::DropSessionIds, drop_path_session_ids(out, start));
        }
        if self.contains(Transform::IaSessionIds) {
            note(
                Transform::IaSessionIds,
                ia::drop_path_session_ids(out, start),
            );
        }
        if self.contains(Transform::CollapseSlashes) && has_authority {
            note(Transform::CollapseSlashes, collapse_slashes(out, start));
        }
        // Dropping an index file can expose a trailing slash, and removing a
        // trailing slash can expose an index file: repeat until neither
        // changes anything (each round shortens the path), so the result is
        // a fixed point.
        loop {
            let dropped = self.contains(Transform::DropIndexFile) && drop_index_file(out, start);
            note(Transform::DropIndexFile, dropped);
            let slashed = self.trailing_slash(out, start, note);
            if !(dropped || slashed) {
                break;
            }
        }
        if self.contains(Transform::LowercasePath) {
            note(
                Transform::LowercasePath,
                lowercase_outside_triplets(&mut out[start..]),
            );
        }
        if self.contains(Transform::DecodeSafe) {
            note(Transform::DecodeSafe, decode_safe(out, start, PATH_SAFE));
        }
    }

    /// `trailing-slash=add|remove` on the path at `out[start..]`; never on `/`.
    fn trailing_slash(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        note: &mut impl FnMut(Transform, bool),
    ) -> bool {
        if self.contains(Transform::TrailingSlashAdd) && wants_trailing_slash(&out[start..]) {
            out.push(b'/');
            note(Transform::TrailingSlashAdd, true);
            return true;
        }
        let path = &out[start..];
        if self.contains(Transform::TrailingSlashRemove) && path.len() > 1 && path.ends_with(b"/") {
            out.pop();
            note(Transform::TrailingSlashRemove, true);
            return true;
        }
        false
    }

    /// The query transforms: parameters are dropped, sorted and re-joined
    /// with their bytes untouched.
    fn write_query(
        &self,
        query: &[u8],
        out: &mut Vec<u8>,
        note: &mut impl FnMut(Transform, bool),
        scratch: &mut Scratch,
    ) {
        // Decode first, so that sorting sees the bytes it leaves behind
        // (`%3A` sorts before `'`, `:` after it).
        let Scratch {
            query: decoded,
            params,
            encoded,
        } = scratch;
        decoded.clear();
        decoded.extend_from_slice(query);
        if self.contains(Transform::DecodeRepeatedly) {
            note(
                Transform::DecodeRepeatedly,
                ia::decode_repeatedly(decoded, 0, ia::Component::Query, encoded),
            );
        }
        if self.contains(Transform::IaSessionIds) {
            note(
                Transform::IaSessionIds,
                ia::drop_query_session_ids(decoded, 0),
            );
        }
        if self.contains(Transform::DecodeSafe) {
            note(Transform::DecodeSafe, decode_safe(decoded, 0, QUERY_SAFE));
        }
        if self.contains(Transform::LowercaseQuery) {
            note(
                Transform::LowercaseQuery,
                lowercase_outside_triplets(decoded),
            );
        }
        self.write_params(decoded, out, note, params);
    }

    /// The parameter transforms on a (decoded) query, written to `out`.
    fn write_params(
        &self,
        query: &[u8],
        out: &mut Vec<u8>,
        note: &mut impl FnMut(Transform, bool),
        params: &mut Vec<(usize, usize)>,
    ) {
        params.clear();
        let mut from = 0;
        for end in memchr::memchr_iter(b'&', query).chain([query.len()]) {
            params.push((from, end));
            from = end + 1;
        }
        let param = |&(from, to): &(usize, usize)| &query[from..to];
        let count = params.len();
        if self.contains(Transform::DropTrackingParams) {
            params.retain(|p| !self.tracking.contains(param_name(param(p))));
            note(Transform::DropTrackingParams, params.len() != count);
        }
        let count = params.len();
        if self.contains(Transform::DropSessionIds) {
            params.retain(|p| !is_session_param(param(p)));
            note(Transform::DropSessionIds, params.len() != count);
        }
        let count = params.len();
        if self.contains(Transform::DropEmptyParams) {
            params.retain(|p| !param(p).is_empty() && !param(p).ends_with(b"="));
            note(Transform::DropEmptyParams, params.len() != count);
        }
        if self.contains(Transform::SortQuery) && params.len() > 1 {
            let sorted = params.is_sorted_by_key(|p| param_name(param(p)));
            // A stable sort: parameters with one name keep their order.
            params.sort_by_key(|p| param_name(param(p)));
            note(Transform::SortQuery, !sorted);
        }
        if self.contains(Transform::SortQueryPairs) && params.len() > 1 {
            let order = |a: &(usize, usize), b: &(usize, usize)| ia::pair_order(param(a), param(b));
            let sorted = params.is_sorted_by(|a, b| order(a, b).is_le());
            params.sort_by(order);
            note(Transform::SortQueryPairs, !sorted);
        }
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                out.push(b'&');
            }
            out.extend_from_slice(param(p));
        }
    }
}

/// The buffers the protocol transforms reuse from one URI to the next, so
/// that rewriting allocates nothing per URI.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The query being rewritten, decoded.
    query: Vec<u8>,
    /// The parameters of the query being rewritten, as ranges.
    params: Vec<(usize, usize)>,
    /// A component being re-encoded by `decode-repeatedly`.
    encoded: Vec<u8>,
}

/// Characters whose `%XX` `decode-safe` decodes in a path: every sub-delim,
/// `:` and `@` (all allowed as they are in a path, §3.3).
const PATH_SAFE: &[u8] = b"!$&'()*+,;=:@";
/// In a query: the same, less `&`, `=`, `+` and `;`, which servers read as
/// separators, plus `?` and `/`... except `/`, never decoded (§2.2).
const QUERY_SAFE: &[u8] = b"!$'()*,:@?";
/// In a fragment: sub-delims, `:`, `@`, `?` and `/`.
const FRAGMENT_SAFE: &[u8] = b"!$&'()*+,;=:@?/";

/// Decodes `%XX` triplets of `safe` characters in `out[start..]`.
fn decode_safe(out: &mut Vec<u8>, start: usize, safe: &[u8]) -> bool {
    decode_triplets(out, start, |value| safe.contains(&value))
}
