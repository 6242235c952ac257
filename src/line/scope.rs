//! Which canonical URIs a run is about: the scope filters of a crawl or a
//! link-dataset cut (domains kept or dropped, patterns kept or dropped,
//! schemes kept). A line whose URI falls outside is counted as filtered,
//! never written.
//!
//! It knows canonical URIs and host names; not lines, columns or files.

use std::collections::HashSet;

use regex::bytes::RegexSet;

use crate::normalize::{NormalizeError, Normalizer};
use crate::uri::{SchemeHost, UriRef};

/// The filters as a user gives them; [`Scope::new`] checks and compiles them.
#[derive(Clone, Debug, Default)]
pub struct ScopeRules {
    /// Keep only URIs whose host is one of these domains or below one.
    pub keep_domains: Vec<String>,
    /// Drop URIs whose host is one of these domains or below one.
    pub drop_domains: Vec<String>,
    /// Keep only URIs that one of these patterns matches.
    pub keep_regex: Vec<String>,
    /// Drop URIs that one of these patterns matches.
    pub drop_regex: Vec<String>,
    /// Keep only URIs with one of these schemes.
    pub keep_schemes: Vec<String>,
}

/// The compiled filters: a URI is in scope when every filter given lets it
/// through.
///
/// ```
/// use urinorm::normalize::{Normalizer, Rung};
/// use urinorm::line::scope::{Scope, ScopeRules};
/// let rules = ScopeRules {
///     keep_domains: vec!["Example.COM".into()],
///     drop_regex: vec![r"\.(png|jpg)$".into()],
///     ..ScopeRules::default()
/// };
/// let scope = Scope::new(&rules, &Normalizer::new(Rung::Scheme))?.expect("filters given");
/// assert!(scope.admits(b"http://www.example.com/a"));
/// assert!(!scope.admits(b"http://notexample.com/a"));
/// assert!(!scope.admits(b"http://example.com/logo.png"));
/// # Ok::<(), urinorm::line::scope::ScopeError>(())
/// ```
#[derive(Debug)]
pub struct Scope {
    keep_domains: Option<Domains>,
    drop_domains: Option<Domains>,
    keep_regex: Option<RegexSet>,
    drop_regex: Option<RegexSet>,
    /// Lowercase (schemes are case-insensitive, RFC 3986 §3.1).
    keep_schemes: Option<Vec<String>>,
}

/// Why the filters cannot be used: a sentence naming the bad one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeError(pub String);

impl std::fmt::Display for ScopeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScopeError {}

impl Scope {
    /// The filters `rules` describe, with domain names written as
    /// `normalizer` writes hosts (so a domain given in Unicode matches its
    /// punycode at the scheme rung); `None` when no filter is given.
    pub fn new(rules: &ScopeRules, normalizer: &Normalizer) -> Result<Option<Scope>, ScopeError> {
        let ScopeRules {
            keep_domains,
            drop_domains,
            keep_regex,
            drop_regex,
            keep_schemes,
        } = rules;
        let lists = [
            keep_domains,
            drop_domains,
            keep_regex,
            drop_regex,
            keep_schemes,
        ];
        if lists.iter().all(|list| list.is_empty()) {
            return Ok(None);
        }
        let domains = |names: &[String]| match names {
            [] => Ok(None),
            names => Domains::new(names, normalizer).map(Some),
        };
        let patterns = |patterns: &[String]| match patterns {
            [] => Ok(None),
            patterns => RegexSet::new(patterns)
                .map(Some)
                .map_err(|e| ScopeError(format!("not a regular expression: {e}"))),
        };
        let schemes = match keep_schemes.as_slice() {
            [] => None,
            schemes => Some(
                schemes
                    .iter()
                    .map(|s| scheme(s))
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Some(Scope {
            keep_domains: domains(keep_domains)?,
            drop_domains: domains(drop_domains)?,
            keep_regex: patterns(keep_regex)?,
            drop_regex: patterns(drop_regex)?,
            keep_schemes: schemes,
        }))
    }

    /// Whether the canonical URI `uri` is in scope.
    pub fn admits(&self, uri: &[u8]) -> bool {
        self.admits_split(uri, &SchemeHost::of_valid(uri))
    }

    /// [`Scope::admits`], with the URI's scheme and host already split.
    pub fn admits_split(&self, uri: &[u8], parts: &SchemeHost<'_>) -> bool {
        let host = parts.host.filter(|h| !h.is_empty());
        let covered = |d: &Domains| host.is_some_and(|h| d.covers(h, parts.registered_name));
        let scheme_kept = self.keep_schemes.as_ref().is_none_or(|kept| {
            let scheme = parts.scheme.unwrap_or_default();
            kept.iter()
                .any(|k| k.as_bytes().eq_ignore_ascii_case(scheme))
        });
        scheme_kept
            && self.keep_domains.as_ref().is_none_or(covered)
            && !self.drop_domains.as_ref().is_some_and(covered)
            && self.keep_regex.as_ref().is_none_or(|r| r.is_match(uri))
            && !self.drop_regex.as_ref().is_some_and(|r| r.is_match(uri))
    }
}

/// A scheme as given: checked against `scheme = ALPHA *( ALPHA / DIGIT /
/// "+" / "-" / "." )` (RFC 3986 §3.1), lowercased.
fn scheme(given: &str) -> Result<String, ScopeError> {
    let mut bytes = given.bytes();
    let valid = bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    match valid {
        true => Ok(given.to_ascii_lowercase()),
        false => Err(ScopeError(format!(
            "'{}' is not a scheme (RFC 3986 §3.1: a letter, then letters, digits, '+', '-' or '.')",
            crate::escape::escape_str(given)
        ))),
    }
}

/// A set of domain names, each matching itself and every name below it.
#[derive(Debug)]
struct Domains {
    /// Lowercase, as the run's normalizer writes hosts.
    names: HashSet<Box<[u8]>, ahash::RandomState>,
}

impl Domains {
    fn new(names: &[String], normalizer: &Normalizer) -> Result<Domains, ScopeError> {
        let names = names
            .iter()
            .map(|name| domain(name, normalizer).map(Vec::into_boxed_slice))
            .collect::<Result<_, _>>()?;
        Ok(Domains { names })
    }

    /// Whether `host` is one of the names or, when it has `labels` (a
    /// registered name, not an address, which only matches itself), below
    /// one: the name itself, or it with labels before it (`a.example.com` is
    /// below `example.com`, `notexample.com` is not). Host names are
    /// case-insensitive (RFC 3986 §3.2.2).
    fn covers(&self, host: &[u8], labels: bool) -> bool {
        let lowered;
        let host = match host.iter().any(u8::is_ascii_uppercase) {
            true => {
                lowered = host.to_ascii_lowercase();
                &lowered[..]
            }
            false => host,
        };
        let host = host.strip_suffix(b".").unwrap_or(host);
        let below = memchr::memchr_iter(b'.', host)
            .filter(|_| labels)
            .map(|dot| &host[dot + 1..]);
        std::iter::once(host)
            .chain(below)
            .any(|suffix| self.names.contains(suffix))
    }
}

/// A domain name as given, written as `normalizer` writes the host of
/// `http://NAME/`, lowercase and without a final dot: what a domain filter
/// matches hosts against. A filter takes a domain and everything below it,
/// so `*.example.com` and `.example.com`, which mean that elsewhere, are
/// `example.com`; any other `*` is an error, never a name matching nothing.
///
/// ```
/// use urinorm::normalize::{Normalizer, Rung};
/// let normalizer = Normalizer::new(Rung::Scheme);
/// assert_eq!(urinorm::line::scope::domain("Bücher.DE.", &normalizer)?, b"xn--bcher-kva.de");
/// assert_eq!(urinorm::line::scope::domain("*.Example.com", &normalizer)?, b"example.com");
/// assert_eq!(urinorm::line::scope::domain(".example.com", &normalizer)?, b"example.com");
/// assert!(urinorm::line::scope::domain("*", &normalizer).is_err());
/// assert!(urinorm::line::scope::domain("example.com/path", &normalizer).is_err());
/// # Ok::<(), urinorm::line::scope::ScopeError>(())
/// ```
pub fn domain(given: &str, normalizer: &Normalizer) -> Result<Vec<u8>, ScopeError> {
    let not_a_domain = |why: &str| {
        ScopeError(format!(
            "'{}' is not a domain name: {why}",
            crate::escape::escape_str(given)
        ))
    };
    let trimmed = given.trim().trim_end_matches('.');
    let name = trimmed
        .strip_prefix("*.")
        .or_else(|| trimmed.strip_prefix('.'))
        .unwrap_or(trimmed);
    if name.contains('*') {
        return Err(not_a_domain(
            "a filter takes a domain and every host below it: write example.com for *.example.com (a '*' alone would be every host: leave the filter out)",
        ));
    }
    let port = name.contains(':') && !name.starts_with('[');
    if name.is_empty() || port || name.contains(['/', '?', '#', '@']) {
        return Err(not_a_domain("give a host name such as example.com"));
    }
    // A name in Unicode is its IDNA form (RFC 5891), as a URI writes it.
    let ascii;
    let name = match name.is_ascii() {
        true => name,
        false => {
            ascii = idna::domain_to_ascii(name).map_err(|_| not_a_domain("not a valid IDN"))?;
            &ascii
        }
    };
    // Offsets in the name as given, not in the URI made of it.
    let at_name = |e: NormalizeError| match e {
        NormalizeError::Invalid(e) => {
            // `name` is a slice of `given`: its offset is the pointers' distance.
            let start = name.as_ptr() as usize - given.as_ptr() as usize;
            let offset = e.offset().saturating_sub("http://".len()) + start;
            not_a_domain(&e.at(offset).to_string())
        }
        rule => not_a_domain(&rule.to_string()),
    };
    let canonical = normalizer
        .normalize(&format!("http://{name}/"))
        .map_err(at_name)?;
    let uri = UriRef::parse(&canonical).map_err(|e| not_a_domain(&e.to_string()))?;
    let host = uri.host().unwrap_or_default();
    Ok(host.trim_end_matches('.').to_ascii_lowercase().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::Rung;

    fn scope(rules: ScopeRules) -> Scope {
        Scope::new(&rules, &Normalizer::new(Rung::Scheme))
            .unwrap()
            .expect("filters given")
    }

    #[test]
    fn no_filter_is_no_scope() {
        let none = Scope::new(&ScopeRules::default(), &Normalizer::new(Rung::Scheme));
        assert!(none.unwrap().is_none());
    }

    #[test]
    fn domains_match_on_label_boundaries() {
        let keep = scope(ScopeRules {
            keep_domains: vec!["example.com".into(), "bücher.de.".into()],
            ..ScopeRules::default()
        });
        for kept in [
            "http://example.com/",
            "https://a.b.EXAMPLE.com:8080/x",
            "http://example.com./",
            "http://xn--bcher-kva.de/",
            "http://shop.xn--bcher-kva.de/",
        ] {
            assert!(keep.admits(kept.as_bytes()), "{kept}");
        }
        for dropped in [
            "http://notexample.com/",
            "http://example.com.evil.org/",
            "http://com/",
            "mailto:a@example.com",
            "http://93.184.216.34/",
        ] {
            assert!(!keep.admits(dropped.as_bytes()), "{dropped}");
        }
    }

    #[test]
    fn an_address_matches_only_itself() {
        let s = scope(ScopeRules {
            drop_domains: vec!["0.0.1".into(), "10.0.0.2".into(), "[::1]".into()],
            ..ScopeRules::default()
        });
        assert!(s.admits(b"http://10.0.0.1/"));
        assert!(!s.admits(b"http://10.0.0.2/"));
        assert!(!s.admits(b"http://[::1]:80/"));
    }

    #[test]
    fn drop_wins_over_keep() {
        let s = scope(ScopeRules {
            keep_domains: vec!["example.com".into()],
            drop_domains: vec!["ads.example.com".into()],
            ..ScopeRules::default()
        });
        assert!(s.admits(b"http://www.example.com/"));
        assert!(!s.admits(b"http://x.ads.example.com/"));
    }

    #[test]
    fn schemes_and_patterns() {
        let s = scope(ScopeRules {
            keep_schemes: vec!["HTTP".into(), "https".into()],
            keep_regex: vec!["/a".into(), "/b".into()],
            drop_regex: vec![r"\.png$".into()],
            ..ScopeRules::default()
        });
        assert!(s.admits(b"http://h/a"));
        assert!(s.admits(b"https://h/b/c"));
        assert!(!s.admits(b"https://h/c"), "no keep pattern");
        assert!(!s.admits(b"https://h/a.png"), "a drop pattern");
        assert!(!s.admits(b"javascript:/a"), "scheme");
        assert!(!s.admits(b"not a uri /a"), "no scheme at all");
    }

    #[test]
    fn bad_filters_are_sentences() {
        let one = |value: &str| vec![value.to_string()];
        let cases = [
            (
                ScopeRules {
                    keep_schemes: one("1http"),
                    ..ScopeRules::default()
                },
                "'1http' is not a scheme",
            ),
            (
                ScopeRules {
                    drop_regex: one("("),
                    ..ScopeRules::default()
                },
                "not a regular expression",
            ),
            (
                ScopeRules {
                    keep_domains: one("http://example.com/"),
                    ..ScopeRules::default()
                },
                "is not a domain name",
            ),
            (
                ScopeRules {
                    drop_domains: one("exa mple.com"),
                    ..ScopeRules::default()
                },
                "is not a domain name: space",
            ),
        ];
        for (rules, says) in cases {
            let e = Scope::new(&rules, &Normalizer::new(Rung::Scheme)).unwrap_err();
            assert!(e.0.contains(says), "{e}");
        }
    }
}
