//! ClearURLs' rules list (`data.min.json`, as its maintainers publish it),
//! read and applied as the ClearURLs add-on applies it:
//!
//! - `providers` in the file's order, each applying to the URIs its
//!   `urlPattern` matches and none of its `exceptions` match (regular
//!   expressions on the whole URI, case-insensitive);
//! - a matching `redirections` expression makes the add-on follow the URI
//!   it wraps and stop: here the redirection is counted, not followed, and
//!   the provider does nothing more;
//! - a `completeProvider` blocks its URIs whole: here such a URI is counted
//!   and passed on unchanged by the provider;
//! - each `rawRules` expression is removed from the whole URI, every match;
//! - `rules` and `referralMarketing` name parameters of the query and of the
//!   fragment to remove, as expressions matched against the whole name,
//!   case-insensitive; a query or fragment left with no parameter goes.
//!
//! Names are matched as they are written in the canonical form (the add-on
//! decodes them first: the two differ only for names with reserved
//! characters percent-encoded). Expressions are the `regex` crate's syntax,
//! which reads the list's JavaScript expressions alike except look-around
//! and back-references; an expression using those is refused with its place.
//!
//! Here is the list of providers, in order, applied to a URI: `load` reads
//! a file into providers, `prefilter` (with the patterns' `literals`) finds
//! the few a URI may match, `matching` applies one. It knows nothing of the
//! other rule files, which the parent reads.

mod literals;
mod load;
mod matching;
mod prefilter;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Events, RuleId, RulesError, Scratch, WebParts};
use crate::escape::escape_str;
use load::ProviderList;
use matching::{Provider, Verdicts};
use prefilter::Prefilter;

/// The providers of every ClearURLs file, in order, and what finds the
/// few a URI may match without trying every pattern.
#[derive(Default)]
pub(super) struct Providers {
    list: Vec<Provider>,
    prefilter: Option<Prefilter>,
    /// The [`RuleId`] of the first provider.
    first_id: u32,
    /// Told apart from every other list compiled in the process, so that
    /// a thread's [`Memo`] is never read for a list it was not made for.
    id: u64,
}

/// What applying a list of providers remembers from one URI to the next,
/// in the scratch of the thread: URIs repeat their hosts and, far more,
/// their parameter names (`utm_source`, `fbclid`, `id`).
#[derive(Default)]
pub(super) struct Memo {
    /// The [`Providers::id`] of the list the rest was made for; 0 is none.
    owner: u64,
    /// The last authority searched for the providers' literals, and the
    /// providers whose literal it holds: a provider that changed the query
    /// leaves the authority as it was, and the patterns are matched again.
    authority: Vec<u8>,
    authority_owners: Vec<usize>,
    verdicts: Verdicts,
}

impl Providers {
    /// Reads the providers of the ClearURLs file `name` and says how many
    /// there were.
    pub(super) fn add(&mut self, name: &str, text: &str) -> Result<usize, RulesError> {
        let fail = |line: Option<usize>, problem: String| RulesError {
            file: name.to_string(),
            line,
            problem,
        };
        let list: ProviderList = serde_json::from_str(text).map_err(|e| {
            fail(
                Some(e.line()),
                format!("not a ClearURLs rules file: {}", escape_str(&e.to_string())),
            )
        })?;
        let providers = list.0.ok_or_else(|| {
            fail(
                None,
                "not a ClearURLs rules file: it has no \"providers\"".into(),
            )
        })?;
        let count = providers.len();
        for (provider, value) in providers {
            let compiled = Provider::compile(name, &provider, &value).map_err(|problem| {
                // The line the provider's name is on: a minified list is one line.
                let key = format!("\"{provider}\"");
                let line = text.find(&key).map(|at| text[..at].lines().count().max(1));
                fail(
                    line,
                    format!("provider '{}': {problem}", escape_str(&provider)),
                )
            })?;
            self.list.push(compiled);
        }
        Ok(count)
    }

    /// The providers' labels, in order.
    pub(super) fn labels(&self) -> impl Iterator<Item = String> + '_ {
        self.list.iter().map(|p| p.label.clone())
    }

    /// Numbers the providers from `first_id` and builds the set of their
    /// patterns; called once every file is read.
    pub(super) fn finish(&mut self, first_id: u32) -> Result<(), RulesError> {
        static LISTS: AtomicU64 = AtomicU64::new(1);
        self.first_id = first_id;
        self.id = LISTS.fetch_add(1, Ordering::Relaxed);
        if self.list.is_empty() {
            return Ok(());
        }
        let prefilter = Prefilter::new(&self.list).map_err(|e| RulesError {
            file: "the ClearURLs files".into(),
            line: None,
            problem: format!("their URL patterns together are too many: {e}"),
        })?;
        self.prefilter = Some(prefilter);
        Ok(())
    }

    /// Applies every provider matching the URI at `out[start..]` (whose
    /// parts are `parts`), in order, calling `fired` with each that changed
    /// it; with the URI's parts after them, none if a provider took it apart.
    pub(super) fn apply(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        mut parts: WebParts,
        scratch: &mut Scratch,
        fired: &mut dyn FnMut(RuleId),
    ) -> (Events, Option<WebParts>) {
        let mut events = Events::default();
        let Some(prefilter) = &self.prefilter else {
            return (events, Some(parts));
        };
        let Scratch {
            candidates,
            decoded,
            providers: memo,
            ..
        } = scratch;
        if memo.owner != self.id {
            *memo = Memo {
                owner: self.id,
                ..Memo::default()
            };
        }
        let mut next = 0;
        // After a provider changes the URI, the patterns are matched
        // again against the new one, as the add-on does, from the next
        // provider on.
        'matching: while next < self.list.len() {
            let uri = &out[start..];
            prefilter.candidates(uri, &uri[parts.authority.clone()], memo, candidates);
            let from = next;
            for &i in candidates.iter().filter(|&&i| i >= from) {
                next = i + 1;
                let provider = &self.list[i];
                if !provider.matches(&out[start..]) {
                    continue;
                }
                let (changed, happened) =
                    provider.apply(out, start, &parts, decoded, &mut |name| {
                        provider.is_field(i, name, &mut memo.verdicts)
                    });
                events.add(happened);
                if changed {
                    fired(RuleId::new(self.first_id + i as u32));
                    match WebParts::of(&out[start..]) {
                        Some(moved) => parts = moved,
                        None => return (events, None),
                    }
                    continue 'matching;
                }
            }
            break;
        }
        (events, Some(parts))
    }
}
