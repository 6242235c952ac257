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

use std::fmt;

use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::query::retain_params;
use super::{Events, Label, RuleId, RulesError, WebParts, regex_problem};
use crate::escape::escape_str;

/// The providers of every ClearURLs file, in order, and one set of their
/// URL patterns, so that a URI is matched against all of them in one pass.
#[derive(Default)]
pub(super) struct Providers {
    list: Vec<Provider>,
    patterns: Option<RegexSet>,
    /// The [`RuleId`] of the first provider.
    first_id: u32,
}

struct Provider {
    /// `data.min.json provider amazon`.
    label: String,
    file: usize,
    pattern: Regex,
    exceptions: Option<Regex>,
    redirections: Option<Regex>,
    complete: bool,
    raw_rules: Vec<Regex>,
    /// `rules` and `referralMarketing`, as one whole-name expression.
    fields: Option<Regex>,
}

impl Providers {
    /// Reads the providers of the ClearURLs file `name` (the `file`th text)
    /// and says how many there were.
    pub(super) fn add(&mut self, name: &str, text: &str, file: usize) -> Result<usize, RulesError> {
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
        let providers = list
            .0
            .ok_or_else(|| fail(None, "not a ClearURLs rules file: it has no \"providers\"".into()))?;
        let count = providers.len();
        for (provider, value) in providers {
            let compiled = Provider::compile(name, file, &provider, &value).map_err(|problem| {
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
    pub(super) fn labels(&self) -> impl Iterator<Item = Label> + '_ {
        self.list
            .iter()
            .map(|p| Label::new(p.label.clone(), p.file))
    }

    /// Numbers the providers from `first_id` and builds the set of their
    /// patterns; called once every file is read.
    pub(super) fn finish(&mut self, first_id: u32) -> Result<(), RulesError> {
        self.first_id = first_id;
        if self.list.is_empty() {
            return Ok(());
        }
        let set = RegexSetBuilder::new(self.list.iter().map(|p| p.pattern.as_str()))
            .case_insensitive(true)
            .unicode(false)
            .build()
            .map_err(|e| RulesError {
                file: "the ClearURLs files".into(),
                line: None,
                problem: format!("their URL patterns together are too large: {e}"),
            })?;
        self.patterns = Some(set);
        Ok(())
    }

    /// Applies every provider matching the URI at `out[start..]`, in order,
    /// calling `fired` with each that changed it.
    pub(super) fn apply(&self, out: &mut Vec<u8>, start: usize, fired: &mut dyn FnMut(RuleId)) -> Events {
        let mut events = Events::default();
        let Some(patterns) = &self.patterns else {
            return events;
        };
        let mut next = 0;
        // After a provider changes the URI, the patterns are matched again
        // against the new one, as the add-on does, from the next provider on.
        'matching: while next < self.list.len() {
            let matched = patterns.matches(&out[start..]);
            let from = next;
            for i in matched.iter().filter(|&i| i >= from) {
                next = i + 1;
                let provider = &self.list[i];
                let (changed, happened) = provider.apply(out, start);
                events.add(happened);
                if changed {
                    fired(RuleId(self.first_id + i as u32));
                    continue 'matching;
                }
            }
            break;
        }
        events
    }
}

impl Provider {
    fn compile(file_name: &str, file: usize, name: &str, value: &Value) -> Result<Provider, String> {
        let Value::Object(fields) = value else {
            return Err("is not an object".into());
        };
        let strings = |field: &str| -> Result<Vec<&str>, String> {
            match fields.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().ok_or(format!("'{field}' is not a list of strings")))
                    .collect(),
                Some(_) => Err(format!("'{field}' is not a list of strings")),
            }
        };
        // The minified list leaves out an empty pattern, which matches every URI.
        let pattern = match fields.get("urlPattern") {
            None | Some(Value::Null) => expression("urlPattern", "")?,
            Some(Value::String(pattern)) => expression("urlPattern", pattern)?,
            Some(_) => return Err("'urlPattern' is not a string".into()),
        };
        let complete = match fields.get("completeProvider") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(complete)) => *complete,
            Some(_) => return Err("'completeProvider' is not true or false".into()),
        };
        let mut whole_names = strings("rules")?;
        whole_names.extend(strings("referralMarketing")?);
        Ok(Provider {
            label: format!("{file_name} provider {name}"),
            file,
            pattern,
            exceptions: any_of("exceptions", &strings("exceptions")?, false)?,
            redirections: any_of("redirections", &strings("redirections")?, false)?,
            complete,
            raw_rules: strings("rawRules")?
                .iter()
                .enumerate()
                .map(|(i, raw)| expression(&format!("rawRules[{i}]"), raw))
                .collect::<Result<_, _>>()?,
            fields: any_of("rules", &whole_names, true)?,
        })
    }

    /// Applies the provider to the URI at `out[start..]`, which its pattern
    /// matches: whether it changed it, and what else happened.
    fn apply(&self, out: &mut Vec<u8>, start: usize) -> (bool, Events) {
        let uri = &out[start..];
        if self.exceptions.as_ref().is_some_and(|e| e.is_match(uri)) {
            return (false, Events::default());
        }
        if self.redirections.as_ref().is_some_and(|r| r.is_match(uri)) {
            return (false, Events::REDIRECTION);
        }
        if self.complete {
            return (false, Events::COMPLETE_PROVIDER);
        }
        let mut changed = false;
        for raw in &self.raw_rules {
            if let std::borrow::Cow::Owned(removed) = raw.replace_all(&out[start..], &b""[..]) {
                out.truncate(start);
                out.extend_from_slice(&removed);
                changed = true;
            }
        }
        let Some(fields) = &self.fields else {
            return (changed, Events::default());
        };
        // The fragment first: removing it leaves the query where it was.
        let Some(parts) = WebParts::of(&out[start..]) else {
            return (changed, Events::default());
        };
        if let Some(fragment) = parts.fragment {
            let fragment = start + fragment.start..start + fragment.end;
            changed |= retain_params(out, fragment, |name| !fields.is_match(name));
        }
        if let Some(query) = parts.query {
            // The add-on matches query names decoded, fragment names as written.
            let query = start + query.start..start + query.end;
            changed |= DECODED.with_borrow_mut(|decoded| {
                retain_params(out, query, |name| !fields.is_match(form_decoded(name, decoded)))
            });
        }
        (changed, Events::default())
    }
}

thread_local! {
    /// A query parameter's name, decoded: reused.
    static DECODED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A query parameter's name as a form decoder reads it (the add-on's
/// `URLSearchParams`): `+` is a space, `%XX` its byte. Names without either
/// are returned as they are.
fn form_decoded<'n>(name: &'n [u8], decoded: &'n mut Vec<u8>) -> &'n [u8] {
    if !name.iter().any(|&b| b == b'%' || b == b'+') {
        return name;
    }
    decoded.clear();
    decoded.extend(name.iter().map(|&b| if b == b'+' { b' ' } else { b }));
    crate::normalize::syntax::decode_triplets(decoded, 0, |_| true);
    decoded
}

/// One expression of the list, case-insensitive as the add-on's (`"i"`).
/// Without Unicode classes and case folding, so that it reads as
/// JavaScript reads it (`\d` is ASCII, `ſ` is no `s`).
fn expression(field: &str, text: &str) -> Result<Regex, String> {
    RegexBuilder::new(text)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .map_err(|e| bad_expression(field, text, &e))
}

/// Any of `texts` (each checked on its own, for the message), as one
/// expression; `whole` anchors each to the whole text (`^rule$`).
fn any_of(field: &str, texts: &[&str], whole: bool) -> Result<Option<Regex>, String> {
    for (i, text) in texts.iter().enumerate() {
        expression(&format!("{field}[{i}]"), text)?;
    }
    if texts.is_empty() {
        return Ok(None);
    }
    let alternatives: Vec<String> = texts.iter().map(|t| format!("(?:{t})")).collect();
    let joined = alternatives.join("|");
    let joined = match whole {
        true => format!("^(?:{joined})$"),
        false => joined,
    };
    expression(field, &joined).map(Some)
}

fn bad_expression(field: &str, text: &str, error: &regex::Error) -> String {
    format!(
        "{field}: bad regular expression '{}': {}",
        escape_str(text),
        regex_problem(error)
    )
}

/// The file's `providers` object, its entries in the file's order (the
/// order the add-on applies them in).
struct ProviderList(Option<Vec<(String, Value)>>);

impl<'de> de::Deserialize<'de> for ProviderList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(TopLevel)
    }
}

struct TopLevel;

impl<'de> Visitor<'de> for TopLevel {
    type Value = ProviderList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with \"providers\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProviderList, A::Error> {
        let mut providers = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "providers" {
                providers = Some(map.next_value::<InOrder>()?.0);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(ProviderList(providers))
    }
}

/// An object's entries in the order they are written.
struct InOrder(Vec<(String, Value)>);

impl<'de> de::Deserialize<'de> for InOrder {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = InOrder;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of providers")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<InOrder, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(InOrder(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}
