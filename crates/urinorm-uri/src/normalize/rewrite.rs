//! The syntax and scheme rungs' rewrite of one reference (§6.2.2, §6.2.3)
//! as one pass over its bytes: the text is copied once, then each rule
//! fixes the bytes it acts on, in place.
//!
//! Rules that keep a component's length (case) may run anywhere. Rules that
//! change it run last component first: the path, query and fragment, then
//! the port, the host, the userinfo. So the positions the parser found
//! still hold for every component not yet rewritten (only bytes after an
//! edit move), and a component's distance from the end of the form is
//! final once it is done: the layout is kept as such distances.
//!
//! It knows the rungs' rules and one reference's offsets, nothing of the
//! protocol rung. Its oracle, in the tests, is the component writer it
//! replaced: each component written out in turn, in §5.3 order.

use memchr::memchr;

use super::{Changes, Rule, scheme, syntax};
use crate::error::InvalidUri;
use crate::offsets::{AuthorityPos, HostTag, Offsets, fits, mark, pos};
use crate::parse::reg_name_kind;
use crate::resolve::remove_dot_segments_within;
use crate::swar;
use crate::uri::UriRef;

/// Appends the canonical form of `uri` at the syntax rung, or at the scheme
/// rung with `by_scheme`, to `out`; with the rules that changed it and
/// where its components stand in what was appended. On error `out` holds
/// a partial form past its old length (the caller truncates it).
pub(super) fn rewrite(
    uri: &UriRef<'_>,
    by_scheme: bool,
    out: &mut Vec<u8>,
) -> Result<(Changes, Offsets), InvalidUri> {
    let start = out.len();
    out.extend_from_slice(uri.as_str().as_bytes());
    let mut changes = Changes::default();
    let input = &uri.offsets;

    // §6.2.2.1, §3.1: the scheme is case-insensitive; lower case keeps its length.
    let mut scheme = None;
    if let Some(end) = input.scheme_end() {
        let name = &mut out[start..start + end];
        if swar::has_ascii_uppercase(name) {
            changes.add(Rule::LowercaseScheme);
            name.make_ascii_lowercase();
        }
        scheme = by_scheme.then(|| scheme::lookup(name)).flatten();
    }
    let mut form = Form {
        out: &mut *out,
        start,
        changes: &mut changes,
    };
    let tail = form.path_query_fragment(uri, scheme);
    let authority = match input.authority {
        Some(authority) => Some(form.authority(uri, authority, scheme, by_scheme)?),
        None => None,
    };

    let end = out.len();
    // A rule may add a byte or two (`/` for an empty path, `/.`): a form
    // can outgrow a reference that only just fits.
    fits(end - start)?;
    let at = |back: usize| pos(end - back - start);
    let mark_at = |back: usize| mark(end - back - start);
    let layout = Offsets {
        scheme_end: input.scheme_end,
        authority: authority.map(|a| AuthorityPos {
            start: at(a.start),
            userinfo_end: a.userinfo_end.map(mark_at),
            host: (at(a.host.0), at(a.host.1)),
            port_start: a.port_start.map(mark_at),
            host_kind: a.host_kind,
        }),
        path: (at(tail.path.0), at(tail.path.1)),
        query_start: tail.query_start.map(mark_at),
        fragment_start: tail.fragment_start.map(mark_at),
        // No rule writes a `%` the input lacked; decoding can take them all.
        has_percent: input.has_percent && memchr(b'%', &out[start..]).is_some(),
    };
    Ok((changes, layout))
}

/// The form being rewritten: `out[start..]`, and the rules that changed it.
struct Form<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    changes: &'a mut Changes,
}

/// Where the path, query and fragment stand, counted back from the end.
struct Tail {
    path: (usize, usize),
    query_start: Option<usize>,
    fragment_start: Option<usize>,
}

/// Where the authority's parts stand, counted back from the end (the
/// fields of an [`AuthorityPos`]).
struct AuthorityBack {
    start: usize,
    userinfo_end: Option<usize>,
    host: (usize, usize),
    port_start: Option<usize>,
    host_kind: HostTag,
}

impl Form<'_> {
    /// Where an input offset stands in the form, for bytes that have not moved.
    fn at(&self, offset: usize) -> usize {
        self.start + offset
    }

    /// How far `index` of the form is from its end.
    fn back(&self, index: usize) -> usize {
        self.out.len() - index
    }

    /// The path, query and fragment in their canonical form.
    fn path_query_fragment(&mut self, uri: &UriRef<'_>, scheme: Option<&scheme::Scheme>) -> Tail {
        let input = &uri.offsets;
        let (path_start, path_end) = input.path();
        let (path_start, mut path_end) = (self.at(path_start), self.at(path_end));
        let query_end = input.fragment_start().map_or(uri.as_str().len(), |f| f - 1);
        let (mut query_start, mut fragment_start) = (
            input.query_start().map(|q| self.at(q)),
            input.fragment_start().map(|f| self.at(f)),
        );
        if input.has_percent {
            // §6.2.2.1, §6.2.2.2, in each component in turn, compacting.
            path_end = self.percent_normalize(path_start, path_end, path_start);
            let mut write = path_end;
            if let Some(q) = input.query_start() {
                self.out[write] = b'?';
                query_start = Some(write + 1);
                write = self.percent_normalize(self.at(q), self.at(query_end), write + 1);
            }
            if let Some(f) = input.fragment_start() {
                self.out[write] = b'#';
                fragment_start = Some(write + 1);
                write = self.percent_normalize(self.at(f), self.out.len(), write + 1);
            }
            self.out.truncate(write);
        }
        let query_start = query_start.map(|q| self.back(q));
        let fragment_start = fragment_start.map(|f| self.back(f));
        let path_end_back = self.back(path_end);
        self.path(uri, path_start, path_end_back, scheme);
        Tail {
            path: (self.back(path_start), path_end_back),
            query_start,
            fragment_start,
        }
    }

    /// [`syntax::percent_normalize_within`] on the form.
    fn percent_normalize(&mut self, read: usize, end: usize, write: usize) -> usize {
        syntax::percent_normalize_within(self.out, read, end, write, self.changes)
    }

    /// The path's rules, on the path from `path_start` to `end_back` bytes
    /// from the end (what follows it is final).
    fn path(
        &mut self,
        uri: &UriRef<'_>,
        path_start: usize,
        end_back: usize,
        scheme: Option<&scheme::Scheme>,
    ) {
        let path_end = |form: &Self| form.out.len() - end_back;
        let path = path_start..path_end(self);
        // §6.2.2.3: dot segments are removed from the paths of URIs; in a
        // relative reference they still mean something to resolution. A
        // rootless path (`urn:a:b/../c`, `mailto:…`) is opaque: it has no
        // hierarchy for `..` to climb, and §5.2.4 would turn it into an
        // absolute path, so it is left as written (as fluent-uri does).
        if uri.scheme().is_some()
            && uri.path().starts_with('/')
            && swar::has_slash_dot(&self.out[path.clone()])
        {
            let kept = remove_dot_segments_within(&mut self.out[path.clone()]);
            if kept < path.len() {
                self.changes.add(Rule::RemoveDotSegments);
                self.out.drain(path_start + kept..path.end);
            }
        }
        let has_authority = uri.offsets.authority.is_some();
        if let Some(scheme) = scheme {
            let end = path_end(self);
            scheme::lowercase_path_parts(&mut self.out[path_start..end], scheme, self.changes);
            if scheme.empty_path_is_root && has_authority && end == path_start {
                self.changes.add(Rule::EmptyPathIsRoot);
                self.out.insert(path_start, b'/');
            }
        }
        // Without an authority, a path that now starts with `//` would read
        // as one (§3.3): `/.` in front keeps it a path, with the same meaning.
        if !has_authority && self.out[path_start..path_end(self)].starts_with(b"//") {
            self.changes.add(Rule::KeepPathFromReadingAsAuthority);
            self.out.splice(path_start..path_start, *b"/.");
        }
    }

    /// The authority's rules: the port, then the host, then the userinfo.
    /// Returns where its parts stand, counted back from the end.
    fn authority(
        &mut self,
        uri: &UriRef<'_>,
        input: AuthorityPos,
        scheme: Option<&scheme::Scheme>,
        by_scheme: bool,
    ) -> Result<AuthorityBack, InvalidUri> {
        let port_start = self.port(uri, input, scheme, by_scheme)?;
        let (host, host_kind) = self.host(uri, input, scheme)?;
        let userinfo_end = input.userinfo_end().map(|end| {
            let (from, end) = (self.at(input.start()), self.at(end));
            if uri.has_percent_encoding() {
                let written = self.percent_normalize(from, end, from);
                self.out.drain(written..end);
                return self.back(written);
            }
            self.back(end)
        });
        Ok(AuthorityBack {
            start: self.back(self.at(input.start())),
            userinfo_end,
            host,
            port_start,
            host_kind,
        })
    }

    /// §3.2.3: an empty port goes with its `:`; at the scheme rung, a
    /// scheme's default port too, and leading zeros (§6.2.3). Returns where
    /// a kept port starts, counted back from the end.
    fn port(
        &mut self,
        uri: &UriRef<'_>,
        input: AuthorityPos,
        scheme: Option<&scheme::Scheme>,
        by_scheme: bool,
    ) -> Result<Option<usize>, InvalidUri> {
        let (Some(port), Some(digits_at)) = (uri.port(), input.port_start()) else {
            return Ok(None);
        };
        let (colon, end) = (self.at(digits_at - 1), self.at(uri.offsets.path().0));
        if port.is_empty() {
            self.changes.add(Rule::DropEmptyPort);
            self.out.remove(colon);
            return Ok(None);
        }
        let default = scheme.and_then(|s| s.default_port).filter(|_| by_scheme);
        let Some(default) = default else {
            return Ok(Some(self.back(colon + 1)));
        };
        match scheme::canonical_port(port, default, self.changes)
            .map_err(|kind| InvalidUri::new(digits_at, kind))?
        {
            None => {
                self.out.drain(colon..end);
                Ok(None)
            }
            Some(digits) => {
                self.out.drain(colon + 1..end - digits.len());
                Ok(Some(self.back(colon + 1)))
            }
        }
    }

    /// The host in its canonical form (see [`syntax::push_host`] and
    /// [`scheme::canonical_host`]), with its kind; where it stands,
    /// counted back from the end.
    fn host(
        &mut self,
        uri: &UriRef<'_>,
        input: AuthorityPos,
        scheme: Option<&scheme::Scheme>,
    ) -> Result<((usize, usize), HostTag), InvalidUri> {
        let (host_start, host_end) = input.host();
        let (from, end) = (self.at(host_start), self.at(host_end));
        let host = &mut self.out[from..end];
        let plain_name = input.host_kind == HostTag::RegName
            && !(uri.has_percent_encoding() && memchr(b'%', host).is_some())
            && scheme.is_none_or(|s| s.special != scheme::Special::File);
        match input.host_kind {
            // The common host: §6.2.2.1 lower case, in place.
            HostTag::RegName if plain_name => {
                if swar::has_ascii_uppercase(host) {
                    self.changes.add(Rule::LowercaseHost);
                    host.make_ascii_lowercase();
                }
            }
            // §3.2.2: a dotted-decimal address has one spelling.
            HostTag::Ipv4 => {}
            // Any other is written after the form and moved into place.
            _ => {
                let written = self.out.len();
                let text = uri.host().expect("an authority has a host");
                let kind = uri.host_kind().expect("an authority has a host");
                syntax::push_host(self.out, text, kind, true, self.changes);
                if let Some(scheme) = scheme {
                    scheme::canonical_host(self.out, written, scheme, true, self.changes)
                        .map_err(|kind| InvalidUri::new(host_start, kind))?;
                }
                let len = self.out.len() - written;
                self.out[from..].rotate_right(len);
                self.out.drain(from + len..end + len);
                let kind = match input.host_kind {
                    // Decoding can make a name read as an address (`%31.2.3.4`).
                    HostTag::RegName => reg_name_kind(&self.out[from..from + len]),
                    literal => literal,
                };
                return Ok(((self.back(from), self.back(from + len)), kind));
            }
        }
        Ok(((self.back(from), self.back(end)), input.host_kind))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::remove_dot_segments;
    use proptest::prelude::*;

    /// The oracle: the component writer [`rewrite`] replaced, each
    /// component written out in turn in §5.3 order, from the same rules.
    fn by_components(
        uri: &UriRef<'_>,
        by_scheme: bool,
        out: &mut Vec<u8>,
    ) -> Result<(Changes, Offsets), InvalidUri> {
        let mut changes = Changes::default();
        let pct = uri.has_percent_encoding();
        let start = out.len();
        let mut layout = Offsets::default();
        let push_component = |out: &mut Vec<u8>, bytes: &str, changes: &mut Changes| match pct {
            true => syntax::push_percent_normalized(out, bytes.as_bytes(), false, changes),
            false => out.extend_from_slice(bytes.as_bytes()),
        };

        let mut scheme = None;
        if let Some(name) = uri.scheme() {
            if name.bytes().any(|b| b.is_ascii_uppercase()) {
                changes.add(Rule::LowercaseScheme);
            }
            out.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
            scheme = by_scheme.then(|| scheme::lookup(&out[start..])).flatten();
            layout.scheme_end = Some(mark(out.len() - start));
            out.push(b':');
        }
        if let (Some(authority), Some(host), Some(host_kind)) =
            (uri.offsets.authority, uri.host(), uri.host_kind())
        {
            let host_tag = authority.host_kind;
            out.extend_from_slice(b"//");
            let authority_start = out.len();
            let mut userinfo_end = None;
            if let Some(userinfo) = uri.userinfo() {
                push_component(out, userinfo, &mut changes);
                userinfo_end = Some(mark(out.len() - start));
                out.push(b'@');
            }
            let host_start = out.len();
            syntax::push_host(out, host, host_kind, pct, &mut changes);
            if let Some(scheme) = scheme {
                scheme::canonical_host(out, host_start, scheme, pct, &mut changes)
                    .map_err(|kind| InvalidUri::new(authority.host().0, kind))?;
            }
            let host_end = out.len();
            let default = scheme.and_then(|s| s.default_port).filter(|_| by_scheme);
            match (uri.port(), default) {
                (None, _) => {}
                (Some(""), _) => changes.add(Rule::DropEmptyPort),
                (Some(port), Some(default)) => {
                    let at = authority.port_start().unwrap_or(0);
                    let kept = scheme::canonical_port(port, default, &mut changes)
                        .map_err(|kind| InvalidUri::new(at, kind))?;
                    if let Some(digits) = kept {
                        out.push(b':');
                        out.extend_from_slice(digits.as_bytes());
                    }
                }
                (Some(port), None) => {
                    out.push(b':');
                    out.extend_from_slice(port.as_bytes());
                }
            }
            layout.authority = Some(AuthorityPos {
                start: pos(authority_start - start),
                userinfo_end,
                host: (pos(host_start - start), pos(host_end - start)),
                port_start: (out.len() > host_end).then(|| mark(host_end + 1 - start)),
                host_kind: match host_tag {
                    HostTag::RegName => reg_name_kind(&out[host_start..host_end]),
                    literal => literal,
                },
            });
        }
        let path_start = out.len();
        push_component(out, uri.path(), &mut changes);
        if uri.scheme().is_some()
            && uri.path().starts_with('/')
            && swar::has_slash_dot(&out[path_start..])
        {
            let before = out.len();
            remove_dot_segments(out, path_start);
            if out.len() != before {
                changes.add(Rule::RemoveDotSegments);
            }
        }
        if let Some(scheme) = scheme {
            scheme::lowercase_path_parts(&mut out[path_start..], scheme, &mut changes);
            if scheme.empty_path_is_root
                && uri.offsets.authority.is_some()
                && out.len() == path_start
            {
                changes.add(Rule::EmptyPathIsRoot);
                out.push(b'/');
            }
        }
        if uri.offsets.authority.is_none() && out[path_start..].starts_with(b"//") {
            changes.add(Rule::KeepPathFromReadingAsAuthority);
            out.splice(path_start..path_start, *b"/.");
        }
        layout.path = (pos(path_start - start), pos(out.len() - start));
        if let Some(query) = uri.query() {
            out.push(b'?');
            layout.query_start = Some(mark(out.len() - start));
            push_component(out, query, &mut changes);
        }
        if let Some(fragment) = uri.fragment() {
            out.push(b'#');
            layout.fragment_start = Some(mark(out.len() - start));
            push_component(out, fragment, &mut changes);
        }
        layout.has_percent = pct && memchr(b'%', &out[start..]).is_some();
        Ok((changes, layout))
    }

    /// A writer of the syntax or scheme rung's form: [`rewrite`] or its oracle.
    type Writer = fn(&UriRef<'_>, bool, &mut Vec<u8>) -> Result<(Changes, Offsets), InvalidUri>;

    /// What a written form says: its bytes, the rules, its layout (as its
    /// `Debug`), or the error.
    fn written(
        write: Writer,
        uri: &UriRef<'_>,
        by_scheme: bool,
    ) -> Result<(String, Changes, String), InvalidUri> {
        // Written after other bytes, as the engine writes into its batch.
        let mut out = b"before".to_vec();
        let (changes, layout) = write(uri, by_scheme, &mut out)?;
        let form = String::from_utf8(out.split_off(6)).expect("ASCII");
        assert_eq!(layout.check(form.as_bytes()), Ok(()), "{form}: {layout:?}");
        Ok((form, changes, format!("{layout:?}")))
    }

    fn assert_agrees_with_the_oracle(input: &str) {
        let Ok(uri) = UriRef::parse(input) else {
            return;
        };
        for by_scheme in [false, true] {
            assert_eq!(
                written(rewrite, &uri, by_scheme),
                written(by_components, &uri, by_scheme),
                "{input:?} by_scheme={by_scheme}"
            );
        }
    }

    #[test]
    fn agrees_with_the_component_writer_on_the_sample_and_the_vectors() {
        let sample = include_str!("../../../../testdata/sample/urls.txt");
        let fluent =
            include_str!("../../../../testdata/conformance/fluent-uri/fluent_uri_normalize.tsv");
        let resolved =
            include_str!("../../../../testdata/conformance/iri-string/iri_string_resolve.tsv");
        let vectors = fluent
            .lines()
            .chain(resolved.lines())
            .flat_map(|l| l.split('\t'));
        let extra = [
            "HTTP://u%41:p%2f@EXAMPLE.com:00080/a/./b/%2E%2E/c?Q%7e#F%3a",
            "http://%31.2.3.4:/",
            "https://[::FFFF:1.2.3.4]:443/",
            "x://[v1.A]:07/",
            "file://LocalHost/etc",
            "http://xn--n3h.example/%E2%98%83",
            "http://%E2%98%83.EXAMPLE:8080",
            "http://%e2%98%83%2e/",
            "http://a:99999/",
            "mailto:A@EXAMPLE.com,b@X.ORG?Subject=1",
            "URN:ISBN:0451450523",
            "a:b//c/../d",
            "a:/.//c",
            "//h:0080/p",
            "//:0",
            "http://h?",
            "http://h#",
            "http://h:",
            "foo://a/%2e%2E/b/..",
        ];
        for line in sample.lines().chain(vectors).chain(extra) {
            assert_agrees_with_the_oracle(line);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn agrees_with_the_component_writer(input in "([hHfFmMuUwW][a-zA-Z]{0,5}:)?(//([a-zA-Z%0-9:]{0,4}@)?([a-zA-Z0-9.%]{0,10}|\\[[0-9a-fA-F:.v]{2,12}\\])(:[0-9]{0,6})?)?(/[a-zA-Z0-9.%@:,]{0,5}){0,5}(\\?[a-zA-Z.=&%/]{0,8})?(#[a-zA-Z%/.]{0,5})?") {
            // A `%` and two random bytes rarely parse: each `%` becomes a
            // triplet, in turn unreserved, reserved, lower-case or UTF-8.
            let triplets = ["%2e", "%2F", "%41", "%e2%98%83", "%3a", "%7E", "%5A"];
            let mut next = triplets.iter().cycle();
            let input: String = input
                .split('%')
                .enumerate()
                .flat_map(|(i, piece)| [if i == 0 { "" } else { next.next().unwrap() }, piece])
                .collect();
            assert_agrees_with_the_oracle(&input);
        }
    }
}
