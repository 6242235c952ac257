//! The catalogue of the protocol rung's transforms: each declared once,
//! in the order they apply, with its name on the command line, what it
//! does and the risk of a false merge, and the cheap test of whether it
//! could change a URI ([`candidates`]). Adding a transform is an entry
//! here, its code in the writer, and a place in the presets that want it.
//!
//! It knows what each transform is called and looks for; not how one
//! rewrites a URI (the writer's) or which are on (the configuration's).

use std::fmt;
use std::str::FromStr;

use super::path::{index_file_slash, wants_trailing_slash};
use super::{ia, is_web};
use crate::host::parse_numeric_ipv4;
use crate::uri::UriRef;

/// What the candidate tests look at, worked out once per URI.
struct Look<'a> {
    uri: &'a UriRef<'a>,
    host: &'a [u8],
    path: &'a [u8],
    query: Option<&'a [u8]>,
    /// A query with something in it.
    has_params: bool,
}

/// Declares [`Transform`] from one table: the enum in the order the
/// transforms apply, [`Transform::ALL`] in that order, and one `match` per
/// column (`name`, `doc` with its `risk`, `risk` alone, the candidate test).
macro_rules! catalogue {
    ($($variant:ident { name: $name:literal, doc: $doc:literal, risk: $risk:literal, may_change: |$look:pat_param| $test:expr, })*) => {
        /// One named transform of the protocol rung.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Transform {
            $($variant,)*
        }

        impl Transform {
            /// Every transform, in the order they apply.
            pub const ALL: [Transform; [$($name),*].len()] = [$(Transform::$variant),*];

            /// The transform's stable name on the command line.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Transform::$variant => $name,)*
                }
            }

            /// What it does, and the risk of a false merge (its
            /// [`risk`](Transform::risk), after a `; `).
            pub const fn doc(self) -> &'static str {
                match self {
                    $(Transform::$variant => concat!($doc, "; ", $risk),)*
                }
            }

            /// The risk of a false merge: how likely (none, low, medium,
            /// high) and why.
            pub const fn risk(self) -> &'static str {
                match self {
                    $(Transform::$variant => $risk,)*
                }
            }

            /// Whether it could change the URI `look` describes: `false`
            /// only when it certainly leaves it as it is.
            fn may_change(self, look: &Look<'_>) -> bool {
                match self {
                    $(Transform::$variant => {
                        let $look = look;
                        $test
                    })*
                }
            }
        }
    };
}

catalogue! {
    DropUserinfo {
        name: "drop-userinfo",
        doc: "drop user:password@",
        risk: "medium: credentials can select content",
        may_change: |look| look.uri.userinfo().is_some(),
    }
    HostTrailingDot {
        name: "host-trailing-dot",
        doc: "drop the root '.' at the end of a host name (only the one: 'a..' stays)",
        risk: "none for DNS names",
        may_change: |look| look.host.ends_with(b"."),
    }
    HostDots {
        name: "host-dots",
        doc: "collapse runs of '.' in a host name and drop leading and trailing ones (IA)",
        risk: "low: no DNS name has empty labels",
        may_change: |look| ia::has_extra_dots(look.host),
    }
    StripWww {
        name: "strip-www",
        doc: "drop a leading 'www.' label when a registrable domain remains (Public Suffix List), not a number",
        risk: "medium: www.x.com and x.com can be different sites",
        may_change: |look| look.host.starts_with(b"www."),
    }
    StripWwwDigits {
        name: "strip-www-digits",
        doc: "drop leading 'www' and 'www'+digits labels (www2., www34.) whatever remains, no Public Suffix List (IA)",
        risk: "high: www2.x.com is often another server",
        may_change: |look| look.host.starts_with(b"www"),
    }
    Ipv4Numeric {
        name: "ipv4-numeric",
        doc: "write hosts like 0x7f.1 or 2130706433 as 127.0.0.1 (RFC 3986 §7.4)",
        risk: "none: resolvers read them so",
        may_change: |look| parse_numeric_ipv4(look.host).is_some(),
    }
    HttpsUpgrade {
        name: "https-upgrade",
        doc: "treat http as https (ws as wss)",
        risk: "low for modern sites, wrong for http-only ones",
        may_change: |look| matches!(look.uri.scheme(), Some("http" | "ws")),
    }
    DecodeRepeatedly {
        name: "decode-repeatedly",
        doc: "decode %XX in path and query again and again (%2525 is %), then encode only what a URI cannot hold raw (IA)",
        risk: "high: %2F becomes a path '/', %26 a query '&'",
        may_change: |look| look.uri.has_percent_encoding(),
    }
    DropSessionIds {
        name: "drop-session-ids",
        doc: "drop jsessionid (WebLogic's '!' and '$' suffixes too), PHPSESSID, ASPSESSIONID*, sid, CFID/CFTOKEN and ASP.NET cookieless (S(...)), (A(...)S(...)F(...)) and bare 24-character (...) segments",
        risk: "low: only token-like values",
        may_change: |look| look.has_params || look.path.contains(&b';') || look.path.contains(&b'('),
    }
    IaSessionIds {
        name: "ia-session-ids",
        doc: "IA's session ids: jsessionid=, phpsessid= or sid= and 32 letters or digits, aspsessionid*, cfid+cftoken, ASP.NET (...) segments before an .aspx page",
        risk: "medium: 'sid=' matches inside any name ('xsid=…' leaves 'x')",
        may_change: |look| look.has_params || look.path.contains(&b'('),
    }
    CollapseSlashes {
        name: "collapse-slashes",
        doc: "write '//' in a path as '/'",
        risk: "medium: many servers, not all, ignore them",
        may_change: |look| look.path.windows(2).any(|w| w == b"//"),
    }
    DropIndexFile {
        name: "drop-index-file",
        doc: "drop index.html/htm/php/asp, default.aspx/asp/htm as last segment",
        risk: "medium: only where the server maps it",
        may_change: |look| index_file_slash(look.path).is_some(),
    }
    TrailingSlashAdd {
        name: "trailing-slash=add",
        doc: "add '/' to a path whose last segment has no '.'",
        risk: "medium: /a and /a/ can differ, relative links resolve differently",
        may_change: |look| wants_trailing_slash(look.path),
    }
    TrailingSlashRemove {
        name: "trailing-slash=remove",
        doc: "remove a trailing '/' (never from '/')",
        risk: "medium: /a/ and /a can differ, relative links resolve differently",
        may_change: |look| look.path.len() > 1 && look.path.ends_with(b"/"),
    }
    LowercasePath {
        name: "lowercase-path",
        doc: "lower-case the path",
        risk: "high: only for hosts known to be case-insensitive (ia only)",
        may_change: |look| crate::swar::has_ascii_uppercase(look.path),
    }
    DecodeSafe {
        name: "decode-safe",
        doc: "decode %XX of characters harmless where they stand (e.g. %40 in a path), never & = + ; # / % in a query",
        risk: "low",
        may_change: |look| look.uri.has_percent_encoding(),
    }
    DropTrackingParams {
        name: "drop-tracking-params",
        doc: "drop utm_*, gclid, fbclid and other analytics parameters",
        risk: "none for the page, by their purpose",
        may_change: |look| look.has_params,
    }
    DropEmptyParams {
        name: "drop-empty-params",
        doc: "drop 'a=' parameters and empty ones ('?&&a=1&' is '?a=1')",
        risk: "medium: 'a=' can differ from no 'a' to a server",
        may_change: |look| look.has_params,
    }
    LowercaseQuery {
        name: "lowercase-query",
        doc: "lower-case the query (IA)",
        risk: "high: parameter values are case-sensitive",
        may_change: |look| look.query.is_some_and(crate::swar::has_ascii_uppercase),
    }
    SortQuery {
        name: "sort-query",
        doc: "sort query parameters by name, stable, bytes unchanged",
        risk: "low: a server that reads order (rare) differs",
        may_change: |look| look.query.is_some_and(|q| q.contains(&b'&')),
    }
    SortQueryPairs {
        name: "sort-query-pairs",
        doc: "sort query parameters by name, then value, byte by byte (IA)",
        risk: "low, and repeated names lose their order",
        may_change: |look| look.query.is_some_and(|q| q.contains(&b'&')),
    }
    DropEmptyQuery {
        name: "drop-empty-query",
        doc: "drop a bare '?'",
        risk: "none for HTTP servers in practice",
        may_change: |look| look.query == Some(b""),
    }
    DropFragment {
        name: "drop-fragment",
        doc: "drop the #fragment",
        risk: "none: fragments are never sent to servers (but single-page apps may route on them)",
        may_change: |look| look.uri.fragment().is_some(),
    }
    CdxSpelling {
        name: "cdx-spelling",
        doc: "write --key surt keys as CDX indexes do: %XX of characters IA leaves raw (\"<>[\\]^`{|} and a path's ?) as themselves, hex in lower case, IPv4 hosts reversed (IA)",
        risk: "none: the canonical form is unchanged",
        // It spells keys; the canonical form never changes.
        may_change: |_| false,
    }
}

impl Transform {
    pub(super) const fn bit(self) -> u32 {
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
    let query = uri.query().map(str::as_bytes);
    let look = Look {
        uri,
        host: uri.host().unwrap_or_default().as_bytes(),
        path: uri.path().as_bytes(),
        query,
        has_params: query.is_some_and(|q| !q.is_empty()),
    };
    let web = is_web(uri);
    Transform::ALL
        .into_iter()
        .filter(move |t| web && t.may_change(&look))
}

#[cfg(test)]
mod tests {
    use super::Transform;

    #[test]
    fn each_risk_starts_with_its_level() {
        for t in Transform::ALL {
            let level = t.risk().split([':', ' ', ',']).next();
            assert!(
                matches!(level, Some("none" | "low" | "medium" | "high")),
                "{}: {}",
                t.name(),
                t.risk()
            );
            assert!(t.doc().ends_with(&format!("; {}", t.risk())));
        }
    }
}
