//! urinorm's rules format: one rule a line, a host pattern, an action and
//! its arguments, separated by spaces or tabs; a line starting with `#` is a
//! comment.
//!
//! ```text
//! # host pattern   action         arguments
//! amazon.com       drop-params    ref pf_rd_*
//! =shop.example    keep-params    id
//! news.example     rewrite-path   ^/amp/(.*)$   /$1
//! *                drop-params    spm
//! ```
//!
//! A pattern `example.com` matches that host and its subdomains on label
//! boundaries, `=host` that host only, `*` every host. Parameter names are
//! compared without regard to ASCII case, a trailing `*` making a prefix.
//! `rewrite-path` replaces every match of a regular expression (the `regex`
//! crate's syntax) in the path with its replacement (`$1`, `${name}`).

use std::borrow::Cow;

use regex::bytes::Regex;

use super::query::{Names, retain_params};
use super::{RulesError, WebParts, regex_problem};
use crate::escape::escape_str;
use crate::normalize::scheme::lowercase_outside_triplets;

/// Which hosts a rule is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostPattern {
    /// `*`: every host.
    Every,
    /// `=host`: that host only (lower case, ASCII).
    Exact(Box<[u8]>),
    /// `example.com`: that host and every host below it.
    Domain(Box<[u8]>),
}

/// What a rule does to a URI of a host it matches.
#[derive(Clone, Debug)]
pub enum Action {
    /// Drops the query parameters so named.
    DropParams(Names),
    /// Drops every query parameter not so named.
    KeepParams(Names),
    /// Replaces every match of the expression in the path.
    RewritePath { regex: Regex, replacement: String },
    /// Lower-cases the path (not the hex digits of `%XX`).
    LowercasePath,
}

impl Action {
    /// The action's name in the rules format.
    pub fn name(&self) -> &'static str {
        match self {
            Action::DropParams(_) => "drop-params",
            Action::KeepParams(_) => "keep-params",
            Action::RewritePath { .. } => "rewrite-path",
            Action::LowercasePath => "lowercase-path",
        }
    }
}

/// Names of the actions, for the message about an unknown one.
const ACTIONS: &str = "drop-params, keep-params, rewrite-path or lowercase-path";

/// One rule and the line it was written on.
#[derive(Clone, Debug)]
pub struct LineRule {
    pub line: usize,
    pub pattern: HostPattern,
    pub action: Action,
}

impl LineRule {
    /// Applies the rule to the web URI at `out[start..]`; says whether it
    /// changed it.
    /// `parts` are the URI's, from `start`.
    pub(super) fn apply(&self, out: &mut Vec<u8>, start: usize, parts: &WebParts) -> bool {
        let query = parts.query.clone().map(|q| start + q.start..start + q.end);
        let path = start + parts.path.start..start + parts.path.end;
        match &self.action {
            Action::DropParams(names) => {
                query.is_some_and(|q| retain_params(out, q, |name| !names.matches(name)))
            }
            Action::KeepParams(names) => {
                query.is_some_and(|q| retain_params(out, q, |name| names.matches(name)))
            }
            Action::RewritePath { regex, replacement } => {
                let rewritten = match regex.replace_all(&out[path.clone()], replacement.as_bytes())
                {
                    Cow::Borrowed(_) => return false,
                    Cow::Owned(rewritten) => rewritten,
                };
                let changed = out[path.clone()] != rewritten[..];
                out.splice(path, rewritten);
                changed
            }
            Action::LowercasePath => lowercase_outside_triplets(&mut out[path]),
        }
    }
}

/// Parses a rules text named `name`.
///
/// ```
/// use urinorm::rules::lines::{HostPattern, parse};
/// let rules = parse("site.rules", "# comment\n=a.example keep-params id\n\n* lowercase-path\n")?;
/// assert_eq!(rules.len(), 2);
/// assert_eq!((rules[0].line, rules[1].line), (2, 4));
/// assert_eq!(rules[1].pattern, HostPattern::Every);
/// let err = parse("site.rules", "a.example strip-params x\n").unwrap_err();
/// assert_eq!(err.to_string(), "site.rules:1: unknown action 'strip-params' (choose drop-params, keep-params, rewrite-path or lowercase-path)");
/// # Ok::<(), urinorm::rules::RulesError>(())
/// ```
pub fn parse(name: &str, text: &str) -> Result<Vec<LineRule>, RulesError> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let fail = |problem: String| RulesError {
            file: name.to_string(),
            line: Some(n + 1),
            problem,
        };
        let line = line.trim_matches([' ', '\t', '\r']);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split([' ', '\t']).filter(|w| !w.is_empty());
        let pattern = host_pattern(words.next().unwrap_or_default()).map_err(fail)?;
        let Some(action) = words.next() else {
            return Err(fail("a host pattern needs an action after it".into()));
        };
        let arguments: Vec<&str> = words.collect();
        let action = parse_action(action, &arguments).map_err(fail)?;
        rules.push(LineRule {
            line: n + 1,
            pattern,
            action,
        });
    }
    Ok(rules)
}

/// `*`, `=host` or `domain`, the host lower-cased and mapped to ASCII
/// (UTS #46), as the scheme rung writes hosts.
fn host_pattern(word: &str) -> Result<HostPattern, String> {
    if word == "*" {
        return Ok(HostPattern::Every);
    }
    let (exact, host) = match word.strip_prefix('=') {
        Some(host) => (true, host),
        None => (false, word),
    };
    let bad = |why: &str| format!("bad host pattern '{}': {why}", escape_str(word));
    if host.contains('*') {
        return Err(bad(
            "'*' stands alone; 'example.com' already matches its subdomains",
        ));
    }
    // The root dot is no part of the name (host-trailing-dot drops it).
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() || host.split('.').any(str::is_empty) {
        return Err(bad("a host name has no empty labels"));
    }
    let ascii = idna::domain_to_ascii(host).map_err(|_| bad("not a host name (UTS #46)"))?;
    if !ascii
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
    {
        return Err(bad("a host name is letters, digits, '-', '_' and dots"));
    }
    let host = ascii.into_bytes().into_boxed_slice();
    Ok(match exact {
        true => HostPattern::Exact(host),
        false => HostPattern::Domain(host),
    })
}

fn parse_action(action: &str, arguments: &[&str]) -> Result<Action, String> {
    let count = |wanted: usize, what: &str| match arguments.len() == wanted {
        true => Ok(()),
        false => Err(format!(
            "{action} takes {what}, not {} arguments",
            arguments.len()
        )),
    };
    match action {
        "drop-params" | "keep-params" => {
            if arguments.is_empty() {
                return Err(format!("{action} needs at least one parameter name"));
            }
            let names = parameter_names(arguments)?;
            Ok(match action {
                "drop-params" => Action::DropParams(names),
                _ => Action::KeepParams(names),
            })
        }
        "rewrite-path" => {
            count(2, "a regular expression and a replacement")?;
            rewrite_path(arguments[0], arguments[1])
        }
        "lowercase-path" => {
            count(0, "no arguments")?;
            Ok(Action::LowercasePath)
        }
        other => Err(format!(
            "unknown action '{}' (choose {ACTIONS})",
            escape_str(other)
        )),
    }
}

fn parameter_names(arguments: &[&str]) -> Result<Names, String> {
    let mut names = Names::default();
    for name in arguments {
        let stem = name.strip_suffix('*').unwrap_or(name);
        if stem.contains(['&', '=', '#', '*']) {
            return Err(format!(
                "bad parameter name '{}': a name has no '&', '=' or '#', and '*' only at its end",
                escape_str(name)
            ));
        }
        names.add(name);
    }
    Ok(names)
}

fn rewrite_path(expression: &str, replacement: &str) -> Result<Action, String> {
    let regex = Regex::new(expression).map_err(|e| {
        format!(
            "bad regular expression '{}': {}",
            escape_str(expression),
            regex_problem(&e)
        )
    })?;
    for group in replacement_groups(replacement) {
        let known = match group.parse::<usize>() {
            Ok(n) => n < regex.captures_len(),
            Err(_) => regex.capture_names().flatten().any(|name| name == group),
        };
        if !known {
            return Err(format!(
                "the replacement '{}' names group '{}', which '{}' does not have",
                escape_str(replacement),
                escape_str(group),
                escape_str(expression)
            ));
        }
    }
    Ok(Action::RewritePath {
        regex,
        replacement: replacement.to_string(),
    })
}

/// The groups a replacement refers to, as the `regex` crate reads it: `$$`
/// is a `$`; `${name}`; `$name`, the longest run of letters, digits and `_`.
fn replacement_groups(replacement: &str) -> Vec<&str> {
    let mut groups = Vec::new();
    let mut rest = replacement;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            rest = after;
        } else if let Some(braced) = rest.strip_prefix('{') {
            if let Some(close) = braced.find('}') {
                groups.push(&braced[..close]);
                rest = &braced[close + 1..];
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                groups.push(&rest[..end]);
            }
            rest = &rest[end..];
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> String {
        parse("r", text).unwrap_err().to_string()
    }

    #[test]
    fn every_error_names_its_line() {
        let cases = [
            ("a.com", "r:1: a host pattern needs an action after it"),
            ("\n\na.com frob x", "r:3: unknown action 'frob'"),
            (
                "*.a.com lowercase-path",
                "r:1: bad host pattern '*.a.com': '*' stands alone",
            ),
            (
                "a..com lowercase-path",
                "r:1: bad host pattern 'a..com': a host name has no empty labels",
            ),
            (
                "=  lowercase-path",
                "r:1: bad host pattern '=': a host name has no empty labels",
            ),
            ("a/b lowercase-path", "r:1: bad host pattern 'a/b'"),
            (
                "a.com drop-params",
                "r:1: drop-params needs at least one parameter name",
            ),
            ("a.com keep-params a=b", "r:1: bad parameter name 'a=b'"),
            ("a.com drop-params a*b", "r:1: bad parameter name 'a*b'"),
            (
                "a.com rewrite-path ^/a",
                "r:1: rewrite-path takes a regular expression and a replacement, not 1 arguments",
            ),
            (
                "a.com rewrite-path ^/(a /$1",
                "r:1: bad regular expression '^/(a': unclosed group",
            ),
            (
                "a.com rewrite-path ^/(a) /$2",
                "r:1: the replacement '/$2' names group '2'",
            ),
            (
                "a.com rewrite-path ^/(?P<x>a) /${y}",
                "r:1: the replacement '/${y}' names group 'y'",
            ),
            (
                "a.com lowercase-path now",
                "r:1: lowercase-path takes no arguments, not 1 arguments",
            ),
            ("a.com frob\u{1b}[2J", "r:1: unknown action 'frob\\x1b[2J'"),
        ];
        for (text, expected) in cases {
            let got = problem(text);
            assert!(got.starts_with(expected), "{text:?}: {got}");
        }
    }

    #[test]
    fn patterns_are_written_as_the_scheme_rung_writes_hosts() {
        let pattern = |w| host_pattern(w).unwrap();
        assert_eq!(pattern("*"), HostPattern::Every);
        assert_eq!(
            pattern("Example.COM."),
            HostPattern::Domain(b"example.com"[..].into())
        );
        assert_eq!(
            pattern("=bücher.example"),
            HostPattern::Exact(b"xn--bcher-kva.example"[..].into())
        );
        assert_eq!(
            pattern("=127.0.0.1"),
            HostPattern::Exact(b"127.0.0.1"[..].into())
        );
    }

    #[test]
    fn replacement_groups_read_as_the_regex_crate_reads_them() {
        assert_eq!(
            replacement_groups("/$1/${name}/$$/$x_2-"),
            ["1", "name", "x_2"]
        );
        assert!(replacement_groups("/plain/$").is_empty());
    }

    fn applied(rule: &str, uri: &str) -> (bool, String) {
        let rule = parse("r", rule).unwrap().remove(0);
        let mut out = uri.as_bytes().to_vec();
        let parts = WebParts::of(&out).unwrap();
        let changed = rule.apply(&mut out, 0, &parts);
        (changed, String::from_utf8(out).unwrap())
    }

    #[test]
    fn each_action_does_what_it_says() {
        let cases = [
            (
                "* drop-params ref pf_rd_*",
                "http://a/p?PF_RD_x=1&q=2&ref=3",
                "http://a/p?q=2",
            ),
            (
                "* keep-params id",
                "http://a/p?x=1&id=2&y#f",
                "http://a/p?id=2#f",
            ),
            ("* keep-params id", "http://a/p?x=1", "http://a/p"),
            (
                "* rewrite-path ^/amp/(.*)$ /$1",
                "https://n/amp/a/b?q",
                "https://n/a/b?q",
            ),
            (
                "* rewrite-path ;jsid=[^/]* $0",
                "https://n/a;jsid=1/b",
                "https://n/a;jsid=1/b",
            ),
            (
                "* rewrite-path ;jsid=[^/]* ${0}x",
                "https://n/a;jsid=1/b",
                "https://n/a;jsid=1x/b",
            ),
            (
                "* lowercase-path",
                "http://a/A/%7E%C3?Q",
                "http://a/a/%7E%C3?Q",
            ),
        ];
        for (rule, uri, expected) in cases {
            let (changed, got) = applied(rule, uri);
            assert_eq!(got, expected, "{rule}");
            assert_eq!(changed, uri != expected, "{rule}");
        }
    }
}
