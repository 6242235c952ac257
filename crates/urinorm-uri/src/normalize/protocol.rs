//! The protocol rung (RFC 3986 §6.2.4): crawler conventions that RFC 3986
//! leaves to practice, each a named transform that can be turned on or off,
//! bundled in presets that are only lists of names.
//!
//! Every transform works on the scheme rung's output, for the schemes it
//! makes sense for (http, https, ws, wss, with a host); any other URI passes
//! through unchanged. Transforms never re-encode a byte they do not mean to change,
//! and they apply in one fixed order, so the result is a fixed point.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::ia;
use super::scheme::{self, Scheme, lowercase_outside_triplets};
use super::site::SiteRewrite;
use super::syntax::decode_triplets;
use crate::host::parse_numeric_ipv4;
use crate::swar;
use crate::uri::{HostKind, UriRef};

/// One named transform of the protocol rung.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transform {
    DropFragment,
    SortQuery,
    DropEmptyQuery,
    DropEmptyParams,
    DropTrackingParams,
    DropSessionIds,
    StripWww,
    DropIndexFile,
    TrailingSlashAdd,
    TrailingSlashRemove,
    HttpsUpgrade,
    DropUserinfo,
    Ipv4Numeric,
    HostTrailingDot,
    CollapseSlashes,
    DecodeSafe,
    LowercasePath,
    HostDots,
    StripWwwDigits,
    DecodeRepeatedly,
    IaSessionIds,
    LowercaseQuery,
    SortQueryPairs,
    CdxSpelling,
}

impl Transform {
    /// Every transform, in the order they apply.
    pub const ALL: [Transform; 24] = [
        Transform::DropUserinfo,
        Transform::HostTrailingDot,
        Transform::HostDots,
        Transform::StripWww,
        Transform::StripWwwDigits,
        Transform::Ipv4Numeric,
        Transform::HttpsUpgrade,
        Transform::DecodeRepeatedly,
        Transform::DropSessionIds,
        Transform::IaSessionIds,
        Transform::CollapseSlashes,
        Transform::DropIndexFile,
        Transform::TrailingSlashAdd,
        Transform::TrailingSlashRemove,
        Transform::LowercasePath,
        Transform::DecodeSafe,
        Transform::DropTrackingParams,
        Transform::DropEmptyParams,
        Transform::LowercaseQuery,
        Transform::SortQuery,
        Transform::SortQueryPairs,
        Transform::DropEmptyQuery,
        Transform::DropFragment,
        Transform::CdxSpelling,
    ];

    /// The transform's stable name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Transform::DropFragment => "drop-fragment",
            Transform::SortQuery => "sort-query",
            Transform::DropEmptyQuery => "drop-empty-query",
            Transform::DropEmptyParams => "drop-empty-params",
            Transform::DropTrackingParams => "drop-tracking-params",
            Transform::DropSessionIds => "drop-session-ids",
            Transform::StripWww => "strip-www",
            Transform::DropIndexFile => "drop-index-file",
            Transform::TrailingSlashAdd => "trailing-slash=add",
            Transform::TrailingSlashRemove => "trailing-slash=remove",
            Transform::HttpsUpgrade => "https-upgrade",
            Transform::DropUserinfo => "drop-userinfo",
            Transform::Ipv4Numeric => "ipv4-numeric",
            Transform::HostTrailingDot => "host-trailing-dot",
            Transform::CollapseSlashes => "collapse-slashes",
            Transform::DecodeSafe => "decode-safe",
            Transform::LowercasePath => "lowercase-path",
            Transform::HostDots => "host-dots",
            Transform::StripWwwDigits => "strip-www-digits",
            Transform::DecodeRepeatedly => "decode-repeatedly",
            Transform::IaSessionIds => "ia-session-ids",
            Transform::LowercaseQuery => "lowercase-query",
            Transform::SortQueryPairs => "sort-query-pairs",
            Transform::CdxSpelling => "cdx-spelling",
        }
    }

    /// What it does, and the risk of a false merge.
    pub const fn doc(self) -> &'static str {
        match self {
            Transform::DropFragment => {
                "drop the #fragment; none: fragments are never sent to servers (but single-page apps may route on them)"
            }
            Transform::SortQuery => {
                "sort query parameters by name, stable, bytes unchanged; low: a server that reads order (rare) differs"
            }
            Transform::DropEmptyQuery => "drop a bare '?'; none for HTTP servers in practice",
            Transform::DropEmptyParams => {
                "drop 'a=' parameters and empty ones ('?&&a=1&' is '?a=1'); medium: 'a=' can differ from no 'a' to a server"
            }
            Transform::DropTrackingParams => {
                "drop utm_*, gclid, fbclid and other analytics parameters; none for the page, by their purpose"
            }
            Transform::DropSessionIds => {
                "drop jsessionid (WebLogic's '!' and '$' suffixes too), PHPSESSID, ASPSESSIONID*, sid, CFID/CFTOKEN and ASP.NET cookieless (S(...)), (A(...)S(...)F(...)) and bare 24-character (...) segments; low: only token-like values"
            }
            Transform::StripWww => {
                "drop a leading 'www.' label when a registrable domain remains (Public Suffix List), not a number; medium: www.x.com and x.com can be different sites"
            }
            Transform::DropIndexFile => {
                "drop index.html/htm/php/asp, default.aspx/asp/htm as last segment; medium: only where the server maps it"
            }
            Transform::TrailingSlashAdd => {
                "add '/' to a path whose last segment has no '.'; medium: /a and /a/ can differ, relative links resolve differently"
            }
            Transform::TrailingSlashRemove => {
                "remove a trailing '/' (never from '/'); medium: /a/ and /a can differ, relative links resolve differently"
            }
            Transform::HttpsUpgrade => {
                "treat http as https (ws as wss); low for modern sites, wrong for http-only ones"
            }
            Transform::DropUserinfo => {
                "drop user:password@; medium: credentials can select content"
            }
            Transform::Ipv4Numeric => {
                "write hosts like 0x7f.1 or 2130706433 as 127.0.0.1 (RFC 3986 §7.4); none: resolvers read them so"
            }
            Transform::HostTrailingDot => {
                "drop the root '.' at the end of a host name (only the one: 'a..' stays); none for DNS names"
            }
            Transform::CollapseSlashes => {
                "write '//' in a path as '/'; medium: many servers, not all, ignore them"
            }
            Transform::DecodeSafe => {
                "decode %XX of characters harmless where they stand (e.g. %40 in a path), never & = + ; # / % in a query; low"
            }
            Transform::LowercasePath => {
                "lower-case the path; high: only for hosts known to be case-insensitive (ia only)"
            }
            Transform::HostDots => {
                "collapse runs of '.' in a host name and drop leading and trailing ones (IA); low: no DNS name has empty labels"
            }
            Transform::StripWwwDigits => {
                "drop leading 'www' and 'www'+digits labels (www2., www34.) whatever remains, no Public Suffix List (IA); high: www2.x.com is often another server"
            }
            Transform::DecodeRepeatedly => {
                "decode %XX in path and query again and again (%2525 is %), then encode only what a URI cannot hold raw (IA); high: %2F becomes a path '/', %26 a query '&'"
            }
            Transform::IaSessionIds => {
                "IA's session ids: jsessionid=, phpsessid= or sid= and 32 letters or digits, aspsessionid*, cfid+cftoken, ASP.NET (...) segments before an .aspx page; medium: 'sid=' matches inside any name ('xsid=…' leaves 'x')"
            }
            Transform::LowercaseQuery => {
                "lower-case the query (IA); high: parameter values are case-sensitive"
            }
            Transform::SortQueryPairs => {
                "sort query parameters by name, then value, byte by byte (IA); low, and repeated names lose their order"
            }
            Transform::CdxSpelling => {
                "write --key surt keys as CDX indexes do: %XX of characters IA leaves raw (\"<>[\\]^`{|} and a path's ?) as themselves, hex in lower case, IPv4 hosts reversed; the canonical form is unchanged (IA)"
            }
        }
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Transform {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Transform::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown transform '{s}' (see `urinorm transforms`)"))
    }
}

/// A named list of transforms: those of the preset it extends, and its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub doc: &'static str,
    /// The transforms of the preset this one extends (none for a base preset).
    pub extends: &'static [Transform],
    /// The transforms it adds.
    pub adds: &'static [Transform],
    /// Whether it is a step of the ladder, each one merging more than the
    /// one before; a compatibility preset (`ia`) is another canonicalizer's
    /// choices, not a step up.
    pub ladder: bool,
}

impl Preset {
    /// Every transform of the preset.
    pub fn transforms(&self) -> impl Iterator<Item = Transform> + '_ {
        self.extends.iter().chain(self.adds).copied()
    }
}

/// What is never a false merge for http(s).
const SAFE: &[Transform] = &[
    Transform::DropFragment,
    Transform::DropEmptyQuery,
    Transform::DropTrackingParams,
    Transform::DropSessionIds,
    Transform::Ipv4Numeric,
    Transform::HostTrailingDot,
];

/// The presets. `safe` holds what is never a false merge for http(s);
/// `aggressive` adds what crawlers commonly accept; `ia` is the Internet
/// Archive's canonicalization, for keys that match its CDX indexes.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "safe",
        doc: "what is never a false merge for http(s)",
        extends: &[],
        adds: SAFE,
        ladder: true,
    },
    Preset {
        name: "aggressive",
        doc: "safe, plus the merges crawlers commonly accept",
        extends: SAFE,
        adds: &[
            Transform::StripWww,
            Transform::HttpsUpgrade,
            Transform::DropIndexFile,
            Transform::TrailingSlashRemove,
            Transform::SortQuery,
            Transform::DropEmptyParams,
            Transform::DropUserinfo,
            Transform::CollapseSlashes,
        ],
        ladder: true,
    },
    Preset {
        name: "ia",
        doc: "the Internet Archive's canonicalization (surt, CDX indexes): with --key surt, their keys",
        extends: &[],
        adds: &[
            Transform::DropFragment,
            Transform::DropUserinfo,
            Transform::HostDots,
            Transform::StripWwwDigits,
            Transform::Ipv4Numeric,
            Transform::DecodeRepeatedly,
            Transform::IaSessionIds,
            Transform::CollapseSlashes,
            Transform::TrailingSlashRemove,
            Transform::LowercasePath,
            Transform::LowercaseQuery,
            Transform::SortQueryPairs,
            Transform::DropEmptyQuery,
            Transform::CdxSpelling,
        ],
        ladder: false,
    },
];

impl FromStr for Preset {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PRESETS
            .iter()
            .copied()
            .find(|p| p.name == s)
            .ok_or_else(|| {
                let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
                let (last, others) = names.split_last().expect("there are presets");
                format!(
                    "unknown preset '{s}' (choose {} or {last})",
                    others.join(", ")
                )
            })
    }
}

/// The protocol rung's options as a person gives them: a preset, transforms
/// added to it and removed from it, and a tracking list to use instead of
/// [`TRACKING_PARAMS`]. The command line's flags and the Python package's
/// arguments both become one of these, so both mean the same.
///
/// ```
/// use urinorm_uri::normalize::protocol::{ProtocolOptions, Transform};
/// let options = ProtocolOptions {
///     preset: Some("aggressive".parse()?),
///     without: &[Transform::StripWww],
///     tracking_list: Some("ref\nsrc_*"),
///     ..ProtocolOptions::default()
/// };
/// let protocol = options.protocol();
/// assert!(protocol.contains(Transform::SortQuery) && !protocol.contains(Transform::StripWww));
/// assert!(!options.is_empty() && ProtocolOptions::default().is_empty());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ProtocolOptions<'a> {
    /// The preset to start from; `safe` when none is given.
    pub preset: Option<Preset>,
    /// Transforms turned on, in order, after the preset's.
    pub with: &'a [Transform],
    /// Transforms turned off, after `with`.
    pub without: &'a [Transform],
    /// The text of a tracking list (see [`Protocol::set_tracking_list`]).
    pub tracking_list: Option<&'a str>,
    /// Site rules, applied after the transforms.
    pub rules: Option<&'a Arc<dyn SiteRewrite>>,
}

impl ProtocolOptions<'_> {
    /// Whether no option is given: only then may a rung below protocol be asked for.
    pub fn is_empty(&self) -> bool {
        self.preset.is_none()
            && self.with.is_empty()
            && self.without.is_empty()
            && self.tracking_list.is_none()
            && self.rules.is_none()
    }

    /// The transforms and tracking list these options describe.
    pub fn protocol(&self) -> Protocol {
        let mut protocol = Protocol::from(self.preset.unwrap_or(PRESETS[0]));
        self.with.iter().for_each(|&t| protocol.add(t));
        self.without.iter().for_each(|&t| protocol.remove(t));
        if let Some(text) = self.tracking_list {
            protocol.set_tracking_list(text);
        }
        protocol
    }
}

/// The query parameters `drop-tracking-params` removes by default; a name
/// ending in `*` is a prefix. Compared without regard to ASCII case.
pub const TRACKING_PARAMS: &[&str] = &[
    "utm_*",
    "gclid",
    "dclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "_ga",
    "_gl",
    "yclid",
    "igshid",
    "twclid",
    "ttclid",
    "li_fat_id",
    "_hsenc",
    "_hsmi",
    "mkt_tok",
    "oly_anon_id",
    "oly_enc_id",
    "vero_id",
    "s_cid",
    "srsltid",
];

/// The built-in tracking list, lowercased and sorted.
fn builtin_sorted() -> impl Iterator<Item = &'static str> {
    static SORTED: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SORTED
        .get_or_init(|| {
            let mut names: Vec<String> = TRACKING_PARAMS
                .iter()
                .map(|t| t.to_ascii_lowercase())
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        })
        .iter()
        .map(String::as_str)
}

/// Which transforms are on, and the tracking list they use.
///
/// ```
/// use urinorm_uri::normalize::protocol::{Protocol, Transform};
/// let mut p: Protocol = "aggressive".parse::<urinorm_uri::normalize::protocol::Preset>()?.into();
/// p.remove(Transform::StripWww);
/// assert!(p.contains(Transform::SortQuery) && !p.contains(Transform::StripWww));
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Protocol {
    on: u32,
    tracking: TrackingList,
}

/// The names `drop-tracking-params` removes (`prefix*` for a prefix), with
/// their first bytes, lower-cased, as a bitmap: most parameters are ruled
/// out by one test.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TrackingList {
    names: Vec<String>,
    first_bytes: [u64; 4],
}

impl TrackingList {
    fn new(names: Vec<String>) -> TrackingList {
        let mut first_bytes = [0u64; 4];
        for name in &names {
            match name.as_bytes() {
                // Every name starts with the empty prefix.
                [b'*'] => first_bytes = [u64::MAX; 4],
                // Only the empty name, which the filter lets through.
                [] => {}
                [first, ..] => {
                    let first = first.to_ascii_lowercase();
                    first_bytes[usize::from(first / 64)] |= 1 << (first % 64);
                }
            }
        }
        TrackingList { names, first_bytes }
    }

    /// Whether a parameter named `name` is on the list, case aside.
    fn contains(&self, name: &[u8]) -> bool {
        if let Some(&first) = name.first() {
            let first = first.to_ascii_lowercase();
            if self.first_bytes[usize::from(first / 64)] & 1 << (first % 64) == 0 {
                return false;
            }
        }
        self.names.iter().any(|t| match t.strip_suffix('*') {
            Some(prefix) => {
                name.len() >= prefix.len()
                    && name[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            }
            None => name.eq_ignore_ascii_case(t.as_bytes()),
        })
    }
}

impl Default for Protocol {
    /// The `safe` preset.
    fn default() -> Self {
        Protocol::from(PRESETS[0])
    }
}

impl From<Preset> for Protocol {
    fn from(preset: Preset) -> Self {
        let mut p = Protocol {
            on: 0,
            tracking: TrackingList::new(TRACKING_PARAMS.iter().map(|s| s.to_string()).collect()),
        };
        preset.transforms().for_each(|t| p.add(t));
        p
    }
}

impl Protocol {
    /// No transform on.
    pub fn none() -> Protocol {
        Protocol {
            on: 0,
            ..Protocol::default()
        }
    }

    /// Turns `transform` on (the other trailing-slash choice goes off).
    pub fn add(&mut self, transform: Transform) {
        match transform {
            Transform::TrailingSlashAdd => self.remove(Transform::TrailingSlashRemove),
            Transform::TrailingSlashRemove => self.remove(Transform::TrailingSlashAdd),
            _ => {}
        }
        self.on |= transform.bit();
    }

    /// Turns `transform` off.
    pub fn remove(&mut self, transform: Transform) {
        self.on &= !transform.bit();
    }

    /// Whether `transform` is on.
    pub fn contains(&self, transform: Transform) -> bool {
        self.on & transform.bit() != 0
    }

    /// The transforms that are on, in the order they apply.
    pub fn transforms(&self) -> impl Iterator<Item = Transform> + '_ {
        Transform::ALL.into_iter().filter(|&t| self.contains(t))
    }

    /// Replaces the tracking list (one name per line, `prefix*` for a prefix;
    /// blank lines and `#` comments ignored).
    pub fn set_tracking_list(&mut self, text: &str) {
        self.tracking = TrackingList::new(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_string)
                .collect(),
        );
    }

    /// The tracking list in a few words, for records of how keys were
    /// made: `built-in`, or how many names were given instead and the
    /// fingerprint of the list (names lowercased and sorted: two lists that
    /// drop the same parameters read the same).
    ///
    /// ```
    /// use urinorm_uri::normalize::protocol::Protocol;
    /// let mut p = Protocol::default();
    /// assert_eq!(p.tracking_setting(), "built-in");
    /// p.set_tracking_list("ref\nsrc_*");
    /// let same = { let mut q = Protocol::default(); q.set_tracking_list("SRC_*\nref"); q };
    /// assert!(p.tracking_setting().starts_with("2 names, fingerprint "));
    /// assert_eq!(p.tracking_setting(), same.tracking_setting());
    /// ```
    pub fn tracking_setting(&self) -> String {
        let mut names: Vec<String> = self
            .tracking
            .names
            .iter()
            .map(|t| t.to_ascii_lowercase())
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.iter().map(String::as_str).eq(builtin_sorted()) {
            return "built-in".to_string();
        }
        let print = crate::fingerprint::fingerprint(names.join("\n").as_bytes());
        let hex: String = print[..8].iter().map(|b| format!("{b:02x}")).collect();
        format!("{} names, fingerprint {hex}", names.len())
    }

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
            if uri.host_kind() == Some(HostKind::RegName) {
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

/// A parameter's name: the bytes before its first `=`.
fn param_name(param: &[u8]) -> &[u8] {
    &param[..param.iter().position(|&b| b == b'=').unwrap_or(param.len())]
}

/// A value that looks like a session token rather than data: long, and
/// made only of letters, digits and `-_.`.
fn is_token(value: &[u8], min_len: usize) -> bool {
    value.len() >= min_len
        && value
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// `PHPSESSID=…`, `JSESSIONID=…`, `ASPSESSIONIDXXXX=…`, `sid=…`,
/// `CFID=…`, `CFTOKEN=…` with a token-like value.
fn is_session_param(param: &[u8]) -> bool {
    let name = param_name(param);
    let value = &param[(name.len() + 1).min(param.len())..];
    let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
    let asp = name.len() >= 12 && name[..12].eq_ignore_ascii_case(b"aspsessionid");
    if is("jsessionid") {
        is_jsessionid(value)
    } else if is("phpsessid") || is("sid") || asp {
        is_token(value, 16)
    } else if is("cfid") || is("cftoken") {
        is_token(value, 4)
    } else {
        false
    }
}

/// The root `.` at the end of a host name (`example.com.`), only the one:
/// `a..` ends in an empty label, not in a root, and stays as it is (so the
/// result is a fixed point: `a..` never becomes `a.` and then `a`).
fn drop_root_dot(out: &mut Vec<u8>, host_start: usize) -> bool {
    let host = &out[host_start..];
    let root = host.len() > 1 && host.ends_with(b".") && !host.ends_with(b"..");
    if root {
        out.pop();
    }
    root
}

/// A `jsessionid` value: a token, which WebLogic follows with `!` and a
/// server number (`…!-12345`) and some servers mark with `$`.
fn is_jsessionid(value: &[u8]) -> bool {
    let token_end = value
        .iter()
        .position(|&b| b == b'!' || b == b'$')
        .unwrap_or(value.len());
    let (token, rest) = value.split_at(token_end);
    is_token(token, 16)
        && rest
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-_.!$".contains(&b))
}

/// Removes `;jsessionid=TOKEN` path parameters and ASP.NET cookieless
/// session segments from the path at `out[start..]`.
fn drop_path_session_ids(out: &mut Vec<u8>, start: usize) -> bool {
    let mut changed = false;
    // ;jsessionid=… runs to the end of its segment.
    while let Some(at) = swar::find_ignore_case(&out[start..], b";jsessionid=") {
        let at = start + at;
        let value_start = at + b";jsessionid=".len();
        let value_end = out[value_start..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(out.len(), |n| value_start + n);
        if !is_jsessionid(&out[value_start..value_end]) {
            break;
        }
        out.drain(at..value_end);
        changed = true;
    }
    // `/(…)/` segments: each segment that opens with `(` is looked at once.
    let mut from = start;
    while let Some(at) = swar::find_pair(&out[from..], b'/', b'(').map(|n| from + n) {
        let segment_end = out[at + 1..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(out.len(), |n| at + 1 + n);
        let last = segment_end == out.len();
        if is_asp_session_segment(&out[at + 1..segment_end], last) {
            out.drain(at..segment_end);
            changed = true;
        } else {
            from = at + 1;
        }
    }
    // `/(S(…))` alone leaves no path, which http writes as `/` (§6.2.3).
    if out.len() == start && changed {
        out.push(b'/');
    }
    changed
}

/// An ASP.NET cookieless session segment: `(S(token))`, or the compound
/// forms `(X(1)S(token))`, `(A(token)S(token)F(token))` (each part a letter
/// and a value in parentheses; a session `S` among them, or only long
/// tokens), or, before the last segment, a bare `(token)` of ASP.NET's 24
/// characters.
fn is_asp_session_segment(segment: &[u8], last: bool) -> bool {
    let Some(inner) = segment
        .strip_prefix(b"(")
        .and_then(|s| s.strip_suffix(b")"))
    else {
        return false;
    };
    if !last && inner.len() == 24 && is_token(inner, 24) {
        return true;
    }
    let mut rest = inner;
    let (mut parts, mut session, mut all_tokens) = (0, false, true);
    while !rest.is_empty() {
        let [letter, b'(', after @ ..] = rest else {
            return false;
        };
        let Some(close) = after.iter().position(|&b| b == b')') else {
            return false;
        };
        let value = &after[..close];
        if !letter.is_ascii_alphabetic() || !is_token(value, 1) {
            return false;
        }
        let long = is_token(value, 16);
        session |= letter.eq_ignore_ascii_case(&b'S') && long;
        all_tokens &= long;
        parts += 1;
        rest = &after[close + 1..];
    }
    parts > 0 && (session || all_tokens)
}

/// Writes each run of `/`s in the path as one.
fn collapse_slashes(out: &mut Vec<u8>, start: usize) -> bool {
    // Most paths have no `//`: they are searched, not rewritten.
    let Some(first) = swar::find_pair(&out[start..], b'/', b'/') else {
        return false;
    };
    let before = out.len();
    let after_first = start + first + 1;
    let mut write = after_first;
    for read in after_first..out.len() {
        let byte = out[read];
        if byte == b'/' && out[write - 1] == b'/' {
            continue;
        }
        out[write] = byte;
        write += 1;
    }
    out.truncate(write);
    write != before
}

/// The last segments `drop-index-file` removes, compared without regard to case.
const INDEX_FILES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "index.asp",
    "default.aspx",
    "default.asp",
    "default.htm",
];

/// The lengths of [`INDEX_FILES`]' names, shortest to longest: a last
/// segment of another length is none.
const INDEX_FILE_LENGTHS: std::ops::RangeInclusive<usize> = {
    let (mut shortest, mut longest) = (usize::MAX, 0);
    let mut i = 0;
    while i < INDEX_FILES.len() {
        let len = INDEX_FILES[i].len();
        shortest = if len < shortest { len } else { shortest };
        longest = if len > longest { len } else { longest };
        i += 1;
    }
    shortest..=longest
};

fn drop_index_file(out: &mut Vec<u8>, start: usize) -> bool {
    let Some(slash) = index_file_slash(&out[start..]) else {
        return false;
    };
    out.truncate(start + slash + 1);
    true
}

/// Where the `/` before a last segment that is an index file stands.
fn index_file_slash(path: &[u8]) -> Option<usize> {
    let slash = memchr::memrchr(b'/', path)?;
    let last = &path[slash + 1..];
    if !INDEX_FILE_LENGTHS.contains(&last.len()) {
        return None;
    }
    INDEX_FILES
        .iter()
        .any(|f| last.eq_ignore_ascii_case(f.as_bytes()))
        .then_some(slash)
}

/// Whether `trailing-slash=add` adds one: a path whose last segment has no `.`.
fn wants_trailing_slash(path: &[u8]) -> bool {
    if path.is_empty() || path.ends_with(b"/") {
        return false;
    }
    let last = &path[path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1)..];
    !last.contains(&b'.')
}

/// `www.` as the first label, when what remains is a registrable domain
/// or below one by the Public Suffix List (`www.bbc.co.uk` → `bbc.co.uk`,
/// `www.foo.github.io` → `foo.github.io`; `www.co.uk` and `www.com` stay,
/// `co.uk` and `com` being public suffixes) and does not read as a number
/// (`www.1.2.3` stays: browsers would take `1.2.3` for an address).
/// `www2.` and `www1355544.` are other labels, untouched.
fn strip_www(out: &mut Vec<u8>, host_start: usize) -> bool {
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

/// The transforms that may change `uri` (in its scheme-rung form) each on
/// its own: a cheap, conservative test, so a transform left out certainly
/// leaves `uri` as it is. It looks for what each one works on (a userinfo, a
/// `www.` label, a `%`, a query, …), so most forms rule out most transforms
/// at a glance.
///
/// ```
/// use urinorm_uri::UriRef;
/// use urinorm_uri::normalize::protocol::{Transform, candidates};
/// let uri = UriRef::parse("https://example.com/a.html?q=1")?;
/// let may: Vec<Transform> = candidates(&uri).collect();
/// assert_eq!(may, [Transform::DropSessionIds, Transform::IaSessionIds, Transform::DropTrackingParams, Transform::DropEmptyParams]);
/// # Ok::<(), urinorm_uri::InvalidUri>(())
/// ```
pub fn candidates<'a>(uri: &'a UriRef<'_>) -> impl Iterator<Item = Transform> + 'a {
    let web = is_web(uri);
    let host = uri.host().unwrap_or_default().as_bytes();
    let path = uri.path().as_bytes();
    let query = uri.query().map(str::as_bytes);
    let has_params = query.is_some_and(|q| !q.is_empty());
    Transform::ALL.into_iter().filter(move |t| {
        web && match t {
            Transform::DropUserinfo => uri.userinfo().is_some(),
            Transform::HostTrailingDot => host.ends_with(b"."),
            Transform::StripWww => host.starts_with(b"www."),
            Transform::Ipv4Numeric => parse_numeric_ipv4(host).is_some(),
            Transform::HttpsUpgrade => matches!(uri.scheme(), Some("http" | "ws")),
            Transform::DropSessionIds => has_params || path.contains(&b';') || path.contains(&b'('),
            Transform::CollapseSlashes => path.windows(2).any(|w| w == b"//"),
            Transform::DropIndexFile => index_file_slash(path).is_some(),
            Transform::TrailingSlashAdd => wants_trailing_slash(path),
            Transform::TrailingSlashRemove => path.len() > 1 && path.ends_with(b"/"),
            Transform::LowercasePath => crate::swar::has_ascii_uppercase(path),
            Transform::HostDots => ia::has_extra_dots(host),
            Transform::StripWwwDigits => host.starts_with(b"www"),
            Transform::DecodeRepeatedly => uri.has_percent_encoding(),
            Transform::IaSessionIds => has_params || path.contains(&b'('),
            Transform::LowercaseQuery => query.is_some_and(crate::swar::has_ascii_uppercase),
            Transform::SortQueryPairs => query.is_some_and(|q| q.contains(&b'&')),
            // It spells keys; the canonical form never changes.
            Transform::CdxSpelling => false,
            Transform::DecodeSafe => uri.has_percent_encoding(),
            Transform::DropTrackingParams | Transform::DropEmptyParams => has_params,
            Transform::SortQuery => query.is_some_and(|q| q.contains(&b'&')),
            Transform::DropEmptyQuery => query == Some(b""),
            Transform::DropFragment => uri.fragment().is_some(),
        }
    })
}

/// Whether the protocol transforms apply: web URIs with a host. `http:/a`
/// (no authority) is no URL a crawler fetches, and its path has to keep the
/// `/.` guard.
fn is_web(uri: &UriRef<'_>) -> bool {
    uri.scheme()
        .is_some_and(|scheme| scheme::is_web_scheme(scheme.as_bytes()))
        && uri.authority().is_some()
}

/// RFC 3986 §7.4: the numeric host forms that resolvers accept (decimal,
/// octal with a leading 0, hex with 0x; one to four parts, the last filling
/// the remaining bytes), written as the dotted-decimal address. Anything
/// that is not exactly such a form stays a reg-name.
fn ipv4_numeric(out: &mut Vec<u8>, host_start: usize) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_tracking_filter_rules_out_no_tracking_name(list in prop::collection::vec("[a-zA-Z_]{0,5}\\*?", 0..6), name in "[a-zA-Z_]{0,6}") {
            let filtered = TrackingList::new(list.clone());
            let unfiltered = TrackingList { first_bytes: [u64::MAX; 4], ..filtered.clone() };
            prop_assert_eq!(filtered.contains(name.as_bytes()), unfiltered.contains(name.as_bytes()));
            // Each entry's own name (a prefix's, lengthened), in upper case:
            // listed, and the filter lets it through.
            for t in &list {
                let listed = match t.strip_suffix('*') {
                    Some(prefix) => format!("{prefix}X"),
                    None => t.clone(),
                };
                prop_assert!(filtered.contains(listed.to_ascii_uppercase().as_bytes()), "{}", t);
            }
        }
    }

    #[test]
    fn index_file_lengths_hold_every_index_file() {
        assert!(
            INDEX_FILES
                .iter()
                .all(|f| INDEX_FILE_LENGTHS.contains(&f.len()))
        );
    }
}
