//! Site rules: per-host normalization that RFC 3986 cannot know, given by
//! the user in urinorm's line format (`--rules`, [`lines`]) or taken from
//! the ClearURLs list (`--rules-clearurls`, [`clearurls`]), applied at the
//! protocol rung after the preset's transforms (§6.2.4 leaves such
//! equivalences to the protocol and its practice).
//!
//! It owns the rules' texts, their compiled form, the index by host
//! ([`index`]) and what applying them does to one URI; the normalizer
//! decides when to apply them and checks the result. It reads no files: the
//! caller hands it texts and their names.

pub mod clearurls;
mod index;
pub mod learn;
pub mod lines;
mod query;

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::escape::escape_str;
use crate::fingerprint::{Fingerprint, fingerprint};
use clearurls::Providers;
use index::HostIndex;
use lines::LineRule;
pub use query::Names;

pub use crate::normalize::site::{Events, RuleId, SiteRewrite};
use crate::scratch::Slot;
use crate::split::split;

/// The format a rules text is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RulesFormat {
    /// urinorm's line format: `host-pattern action arguments…` ([`lines`]).
    Lines,
    /// ClearURLs' `data.min.json` ([`clearurls`]).
    ClearUrls,
}

/// One rules file as the caller read it.
#[derive(Clone, Debug)]
pub struct RulesText {
    /// The name messages and labels give it (the path as the user wrote it).
    pub name: String,
    pub format: RulesFormat,
    pub text: String,
}

/// A rules file that cannot be used: where, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesError {
    /// The file's name.
    pub file: String,
    /// The 1-based line the problem is on; `None` for the whole file.
    pub line: Option<usize>,
    /// What is wrong, in words (anything from the file in it is escaped).
    pub problem: String,
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = escape_str(&self.file);
        match self.line {
            Some(line) => write!(f, "{file}:{line}: {}", self.problem),
            None => write!(f, "{file}: {}", self.problem),
        }
    }
}

impl std::error::Error for RulesError {}

/// What is wrong with a regular expression, in one line: the `regex`
/// crate's message spans lines, the pattern with a caret under the fault,
/// then `error: …`.
fn regex_problem(error: &regex::Error) -> String {
    let message = error.to_string();
    let last = message.lines().last().unwrap_or_default().trim();
    last.strip_prefix("error: ").unwrap_or(last).to_string()
}

/// Compiled site rules, cheap to clone (the compiled form is shared).
///
/// ```
/// use urinorm::rules::{RulesFormat, RulesText, SiteRewrite, SiteRules};
/// let rules = SiteRules::compile(&[RulesText {
///     name: "site.rules".into(),
///     format: RulesFormat::Lines,
///     text: "amazon.com drop-params ref pf_rd_*\n".into(),
/// }])?;
/// let mut uri = b"https://www.amazon.com/dp/1?pf_rd_p=2&ref=x&q=1".to_vec();
/// let mut fired = Vec::new();
/// let mut scratch = urinorm::scratch::Slot::default();
/// rules.apply(&mut uri, 0, &mut scratch, &mut |id| fired.push(rules.label(id).to_string()));
/// assert_eq!(uri, b"https://www.amazon.com/dp/1?q=1");
/// assert_eq!(fired, ["site.rules:1 drop-params"]);
/// # Ok::<(), urinorm::rules::RulesError>(())
/// ```
#[derive(Clone)]
pub struct SiteRules(Arc<Compiled>);

struct Compiled {
    /// Every rule's label; line rules first, by [`RuleId`].
    /// What each rule is called in messages: `site.rules:2 drop-params`,
    /// `data.min.json provider amazon`.
    labels: Vec<String>,
    /// The line-format rules, in the order given (`RuleId` = index).
    rules: Vec<LineRule>,
    index: HostIndex,
    providers: Providers,
    /// What the texts hold and their fingerprint, for records of how keys
    /// were made.
    described: String,
    fingerprint: Fingerprint,
}

impl fmt::Debug for SiteRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.described)
    }
}

/// Two rule sets are equal when they were compiled from the same texts.
impl PartialEq for SiteRules {
    fn eq(&self, other: &SiteRules) -> bool {
        self.0.fingerprint == other.0.fingerprint
    }
}

impl Eq for SiteRules {}

impl SiteRules {
    /// Compiles rules files, in order: line rules apply in the order they
    /// are given, after every ClearURLs provider (a user's own rules have
    /// the last word).
    pub fn compile(texts: &[RulesText]) -> Result<SiteRules, RulesError> {
        let mut labels = Vec::new();
        let mut rules = Vec::new();
        let mut providers = Providers::default();
        let mut provider_count = 0;
        let mut printed = Vec::new();
        for text in texts {
            match text.format {
                RulesFormat::Lines => {
                    let parsed = lines::parse(&text.name, &text.text)?;
                    for rule in &parsed {
                        labels.push(format!(
                            "{}:{} {}",
                            text.name,
                            rule.line,
                            rule.action.name()
                        ));
                    }
                    rules.extend(parsed);
                    printed.push(b'L');
                }
                RulesFormat::ClearUrls => {
                    provider_count += providers.add(&text.name, &text.text)?;
                    printed.push(b'C');
                }
            }
            printed.extend_from_slice(&fingerprint(text.text.as_bytes()));
        }
        let print = fingerprint(&printed);
        let hex: String = print[..8].iter().map(|b| format!("{b:02x}")).collect();
        let described = format!(
            "{} rules and {provider_count} ClearURLs providers from {} files, fingerprint {hex}",
            rules.len(),
            texts.len()
        );
        // Provider labels follow the line rules', in the providers' order.
        let first_provider = labels.len() as u32;
        labels.extend(providers.labels());
        providers.finish(first_provider)?;
        Ok(SiteRules(Arc::new(Compiled {
            index: HostIndex::new(rules.iter().map(|r| &r.pattern)),
            labels,
            rules,
            providers,
            described,
            fingerprint: print,
        })))
    }

    /// The rules as a normalizer holds them
    /// ([`Normalizer::with_rules`](crate::normalize::Normalizer::with_rules)).
    ///
    /// ```
    /// use urinorm::normalize::{Normalizer, Rung};
    /// use urinorm::rules::{RulesFormat, RulesText, SiteRules};
    /// let text = "news.example rewrite-path ^/amp/(.*)$ /$1\n".to_string();
    /// let rules = SiteRules::compile(&[RulesText { name: "site.rules".into(), format: RulesFormat::Lines, text }])?;
    /// let normalizer = Normalizer::new(Rung::Protocol).with_rules(rules.into_rewrite());
    /// assert_eq!(normalizer.normalize("http://News.Example/amp/a/b").unwrap(), "http://news.example/a/b");
    /// // A result that normalizing again would change is rejected, naming the rule.
    /// let err = normalizer.normalize("http://news.example/amp/amp/a").unwrap_err();
    /// assert_eq!(err.to_string(), "rule site.rules:1 rewrite-path gives a URI that normalizing again changes");
    /// # Ok::<(), urinorm::rules::RulesError>(())
    /// ```
    pub fn into_rewrite(self) -> Arc<dyn SiteRewrite> {
        Arc::new(self)
    }
}

impl SiteRewrite for SiteRules {
    /// Applies the rules to the web URI at `out[start..]` (an `http`,
    /// `https`, `ws` or `wss` URI with an authority, in its protocol-rung
    /// form), calling `fired` with each rule that changed it, in order.
    /// Any other URI is left as it is.
    fn apply(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        scratch: &mut Slot,
        fired: &mut dyn FnMut(RuleId),
    ) -> Events {
        let mut events = Events::default();
        let Some(parts) = WebParts::of(&out[start..]) else {
            return events;
        };
        let compiled = &*self.0;
        let scratch: &mut Scratch = scratch.get();
        let mut note = |id: RuleId| {
            events.add(Events::CHANGED);
            fired(id);
        };
        let (provider_events, parts) = compiled
            .providers
            .apply(out, start, parts, scratch, &mut note);
        // A provider's raw rule may have taken the URI apart: then it is
        // rejected as its doing, and no line rule sees it.
        let Some(mut parts) = parts else {
            events.add(provider_events);
            return events;
        };
        let matched = &mut scratch.matched;
        let host = &out[start + parts.host.start..start + parts.host.end];
        compiled.index.matching(host, matched);
        for &i in matched.iter() {
            if compiled.rules[i as usize].apply(out, start, &parts) {
                note(RuleId::new(i));
                // The parts moved; a rewrite that took the URI apart
                // ends here, and the normalizer rejects the line.
                match WebParts::of(&out[start..]) {
                    Some(moved) => parts = moved,
                    None => break,
                }
            }
        }
        events.add(provider_events);
        events
    }

    fn label(&self, id: RuleId) -> &str {
        &self.0.labels[id.index()]
    }

    /// What the texts hold and the fingerprint of their contents, in
    /// order (not of their names: the same rules by another path are the
    /// same).
    fn describe(&self) -> &str {
        &self.0.described
    }
}

/// The buffers applying rules reuses from one URI to the next, kept in
/// the normalizer's scratch [`Slot`].
#[derive(Default)]
struct Scratch {
    /// The line rules that match the host of the URI being rewritten.
    matched: Vec<u32>,
    /// The ClearURLs providers the URI may match.
    candidates: Vec<usize>,
    /// What the ClearURLs providers remember from one URI to the next.
    providers: clearurls::Memo,
    /// A query parameter's name, decoded.
    decoded: Vec<u8>,
}

/// Where the components of a web URI with an authority are ([`split`]):
/// the rules rewrite one component at a time and look again.
#[derive(Clone, Debug, PartialEq, Eq)]
struct WebParts {
    /// After `//`, up to the path: userinfo, host and port.
    authority: Range<usize>,
    host: Range<usize>,
    path: Range<usize>,
    /// The query without its `?`.
    query: Option<Range<usize>>,
    /// The fragment without its `#`.
    fragment: Option<Range<usize>>,
}

impl WebParts {
    /// The parts of `uri`, if it is a web URI with an authority.
    fn of(uri: &[u8]) -> Option<WebParts> {
        let parts = split(uri);
        let scheme = parts.head.scheme?;
        if !crate::normalize::scheme::is_web_scheme(&uri[scheme]) {
            return None;
        }
        Some(WebParts {
            authority: parts.head.authority?,
            host: parts.head.host?,
            path: parts.path,
            query: parts.query,
            fragment: parts.fragment,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_parts_split_as_appendix_b() {
        let uri = b"https://u:p@Ex.com:8080/a/b?c=1&d#e?f";
        let parts = WebParts::of(uri).unwrap();
        assert_eq!(&uri[parts.authority.clone()], b"u:p@Ex.com:8080");
        assert_eq!(&uri[parts.host.clone()], b"Ex.com");
        assert_eq!(&uri[parts.path.clone()], b"/a/b");
        assert_eq!(&uri[parts.query.clone().unwrap()], b"c=1&d");
        assert_eq!(&uri[parts.fragment.clone().unwrap()], b"e?f");
        let literal = WebParts::of(b"http://[::1]:80?q").unwrap();
        assert_eq!(literal.host, 7..12);
        assert_eq!(literal.path, 15..15);
        assert_eq!(WebParts::of(b"http://u:p@[::1]/").unwrap().host, 11..16);
        assert_eq!(WebParts::of(b"ws://h:").unwrap().host, 5..6);
        assert_eq!(WebParts::of(b"http://a#x?y").unwrap().query, None);
        assert!(WebParts::of(b"ftp://a/").is_none());
        assert!(WebParts::of(b"http:/a").is_none());
    }
}
