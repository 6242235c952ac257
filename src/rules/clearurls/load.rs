//! A ClearURLs file read: its `providers` in the file's order, each
//! compiled into a [`Provider`], its expressions read as the add-on's
//! JavaScript reads them. It knows the file's shape, not how a provider
//! is matched or applied.

use std::fmt;

use regex::bytes::{Regex, RegexBuilder};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::matching::{Guarded, NameStarts, Provider, Shape};
use crate::escape::escape_str;
use crate::rules::regex_problem;

impl Provider {
    pub(super) fn compile(file_name: &str, name: &str, value: &Value) -> Result<Provider, String> {
        let Value::Object(fields) = value else {
            return Err("is not an object".into());
        };
        let strings = |field: &str| -> Result<Vec<&str>, String> {
            match fields.get(field) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .ok_or(format!("'{field}' is not a list of strings"))
                    })
                    .collect(),
                Some(_) => Err(format!("'{field}' is not a list of strings")),
            }
        };
        // The minified list leaves out an empty pattern, which matches every URI.
        let pattern_text = match fields.get("urlPattern") {
            None | Some(Value::Null) => "",
            Some(Value::String(pattern)) => pattern.as_str(),
            Some(_) => return Err("'urlPattern' is not a string".into()),
        };
        let pattern = expression("urlPattern", pattern_text)?;
        let shape = Shape::of(pattern_text);
        let complete = match fields.get("completeProvider") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(complete)) => *complete,
            Some(_) => return Err("'completeProvider' is not true or false".into()),
        };
        let mut whole_names = strings("rules")?;
        whole_names.extend(strings("referralMarketing")?);
        Ok(Provider {
            label: format!("{file_name} provider {name}"),
            pattern,
            shape,
            exceptions: Guarded::any_of("exceptions", &strings("exceptions")?, pattern_text)?,
            redirections: Guarded::any_of("redirections", &strings("redirections")?, pattern_text)?,
            complete,
            raw_rules: strings("rawRules")?
                .iter()
                .enumerate()
                .map(|(i, raw)| expression(&format!("rawRules[{i}]"), raw))
                .collect::<Result<_, _>>()?,
            fields: any_of("rules", &whole_names, true)?,
            field_starts: NameStarts::of(&whole_names),
        })
    }
}

/// One expression of the list, case-insensitive as the add-on's (`"i"`).
/// Without Unicode classes and case folding, so that it reads as
/// JavaScript reads it (`\d` is ASCII, `ſ` is no `s`).
pub(super) fn expression(field: &str, text: &str) -> Result<Regex, String> {
    RegexBuilder::new(text)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .map_err(|e| bad_expression(field, text, &e))
}

/// Any of `texts` (each checked on its own, for the message), as one
/// expression; `whole` anchors each to the whole text (`^rule$`).
pub(super) fn any_of(field: &str, texts: &[&str], whole: bool) -> Result<Option<Regex>, String> {
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
pub(super) struct ProviderList(pub(super) Option<Vec<(String, Value)>>);

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
