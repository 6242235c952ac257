//! The protocol rung's writer: the scheme-rung form of a URI copied once,
//! component by component, each transform that is on applied to the
//! component it works on, in the catalogue's order.
//!
//! It knows how the transforms rewrite; not which are on or why.

use super::host::{drop_root_dot, ipv4_numeric, strip_www};
use super::path::{collapse_slashes, drop_index_file, wants_trailing_slash};
use super::session::{drop_path_session_ids, is_session_param};
use super::{Protocol, Transform, ia, param_name};
use crate::normalize::scheme::{self, Scheme, lowercase_outside_triplets};
use crate::normalize::syntax::decode_triplets;
use crate::offsets::HostTag;
use crate::uri::UriRef;

impl Protocol {
    /// Appends the protocol form of `uri` (which is in its scheme-rung form)
    /// to `out`; returns the transforms that changed it, as rule flags.
    pub(crate) fn write(&self, uri: &UriRef<'_>, out: &mut Vec<u8>, scratch: &mut Scratch) -> u32 {
        let text = uri.as_str().as_bytes();
        // Only http(s) and ws(s) URIs with an authority are transformed
        // (what `is_web` tests, with the parts it finds kept).
        let web = uri
            .offsets
            .scheme_end()
            .filter(|&end| scheme::is_web_scheme(&text[..end]))
            .zip(uri.offsets.authority);
        let Some((scheme_end, authority)) = web else {
            out.extend_from_slice(text);
            return 0;
        };
        let start = out.len();
        let mut fired = 0u32;
        let on = |t: Transform| self.contains(t);
        let mut note = |t: Transform, changed: bool| {
            if changed {
                fired |= t.bit();
            }
        };
        // The form is copied in runs: `text[copied..]` is what is left to
        // copy, each transform writing its own bytes where it acts.
        let mut copied = 0;
        let mut scheme_name = &text[..scheme_end];
        if on(Transform::HttpsUpgrade) && matches!(scheme_name, b"http" | b"ws") {
            scheme_name = if scheme_name == b"http" {
                b"https"
            } else {
                b"wss"
            };
            out.extend_from_slice(scheme_name);
            copied = scheme_end;
            note(Transform::HttpsUpgrade, true);
        }
        if let Some(userinfo_end) = authority.userinfo_end()
            && on(Transform::DropUserinfo)
        {
            out.extend_from_slice(&text[copied..authority.start()]);
            copied = userinfo_end + 1;
            note(Transform::DropUserinfo, true);
        }
        let (host_start, host_end) = authority.host();
        out.extend_from_slice(&text[copied..host_end]);
        copied = host_end;
        if authority.host_kind == HostTag::RegName {
            let host_start = out.len() - (host_end - host_start);
            self.write_host(out, host_start, &mut note);
        }
        let (path_start, path_end) = uri.offsets.path();
        if let Some(port_start) = authority.port_start() {
            let default = scheme::lookup(scheme_name).and_then(|s: &Scheme| s.default_port);
            let port = &uri.as_str()[port_start..path_start];
            if on(Transform::HttpsUpgrade) && default.is_some_and(|d| port.parse() == Ok(d)) {
                // After https-upgrade, http's explicit :443 is the default.
                note(Transform::HttpsUpgrade, true);
                copied = path_start;
            }
        }
        out.extend_from_slice(&text[copied..path_end]);
        self.write_path(out, out.len() - (path_end - path_start), &mut note, scratch);

        if let Some(query) = uri.query() {
            let query_start = out.len();
            out.push(b'?');
            self.write_query(query.as_bytes(), out, &mut note, scratch);
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

    /// The host transforms, on the reg-name at `out[host_start..]`.
    fn write_host(
        &self,
        out: &mut Vec<u8>,
        host_start: usize,
        note: &mut impl FnMut(Transform, bool),
    ) {
        let on = |t: Transform| self.contains(t);
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

    /// The path transforms, on `out[path_start..]` (the path of a URI with
    /// an authority).
    fn write_path(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        note: &mut impl FnMut(Transform, bool),
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
        if self.contains(Transform::CollapseSlashes) {
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
        let Scratch {
            query: decoded,
            params,
            encoded,
        } = scratch;
        if self.on & REWRITE_QUERY_BYTES == 0 {
            // Nothing rewrites the query's bytes: its parameters are read
            // where they stand, without a copy.
            return self.write_params(query, out, note, params);
        }
        // Decode first, so that sorting sees the bytes it leaves behind
        // (`%3A` sorts before `'`, `:` after it).
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
        params: &mut Vec<Param>,
    ) {
        if self.on & REWRITE_PARAMS == 0 {
            out.extend_from_slice(query);
            return;
        }
        params.clear();
        let mut from = 0;
        for end in memchr::memchr_iter(b'&', query).chain([query.len()]) {
            let name_end = from + param_name(&query[from..end]).len();
            params.push(Param {
                from,
                name_end,
                end,
            });
            from = end + 1;
        }
        let mut changed = self.drop_params(query, params, note);
        let name = |p: &Param| &query[p.from..p.name_end];
        let whole = |p: &Param| &query[p.from..p.end];
        if self.contains(Transform::SortQuery) && params.len() > 1 {
            let sorted = params.is_sorted_by_key(name);
            // A stable sort: parameters with one name keep their order.
            params.sort_by_key(name);
            note(Transform::SortQuery, !sorted);
            changed |= !sorted;
        }
        if self.contains(Transform::SortQueryPairs) && params.len() > 1 {
            let order = |a: &Param, b: &Param| ia::pair_order(whole(a), whole(b));
            let sorted = params.is_sorted_by(|a, b| order(a, b).is_le());
            params.sort_by(order);
            note(Transform::SortQueryPairs, !sorted);
            changed |= !sorted;
        }
        if !changed {
            // Every parameter where it stood: the query as it is.
            out.extend_from_slice(query);
            return;
        }
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                out.push(b'&');
            }
            out.extend_from_slice(whole(p));
        }
    }

    /// `drop-tracking-params`, `drop-session-ids` and `drop-empty-params`
    /// in one pass over the parameters, each parameter dropped by the first
    /// of them (in that order) that takes it. Returns whether any was dropped.
    fn drop_params(
        &self,
        query: &[u8],
        params: &mut Vec<Param>,
        note: &mut impl FnMut(Transform, bool),
    ) -> bool {
        let tracking = self.contains(Transform::DropTrackingParams);
        let session = self.contains(Transform::DropSessionIds);
        let empty = self.contains(Transform::DropEmptyParams);
        if !(tracking || session || empty) {
            return false;
        }
        let mut dropped = [false; 3];
        params.retain(|p| {
            let name = &query[p.from..p.name_end];
            let value = || &query[(p.name_end + 1).min(p.end)..p.end];
            let by = if tracking && self.tracking.contains(name) {
                0
            } else if session && is_session_param(name, value()) {
                1
            } else if empty && (p.from == p.end || query[p.end - 1] == b'=') {
                // The empty parameter (`?&&`) and one ending in `=`.
                2
            } else {
                return true;
            };
            dropped[by] = true;
            false
        });
        note(Transform::DropTrackingParams, dropped[0]);
        note(Transform::DropSessionIds, dropped[1]);
        note(Transform::DropEmptyParams, dropped[2]);
        dropped.contains(&true)
    }
}

/// A parameter of the query being rewritten: `query[from..end]`, its name
/// `query[from..name_end]`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Param {
    from: usize,
    name_end: usize,
    end: usize,
}

/// The transforms that rewrite a query's bytes before its parameters are
/// split, as rule flags: without them, the parameters are read from the
/// form itself.
const REWRITE_QUERY_BYTES: u32 = Transform::DecodeRepeatedly.bit()
    | Transform::IaSessionIds.bit()
    | Transform::DecodeSafe.bit()
    | Transform::LowercaseQuery.bit();

/// The transforms that drop or reorder parameters, as rule flags: without
/// them, the query is written as it is.
const REWRITE_PARAMS: u32 = Transform::DropTrackingParams.bit()
    | Transform::DropSessionIds.bit()
    | Transform::DropEmptyParams.bit()
    | Transform::SortQuery.bit()
    | Transform::SortQueryPairs.bit();

/// The buffers the protocol transforms reuse from one URI to the next, so
/// that rewriting allocates nothing per URI.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    /// The query being rewritten, decoded.
    query: Vec<u8>,
    /// The parameters of the query being rewritten.
    params: Vec<Param>,
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
