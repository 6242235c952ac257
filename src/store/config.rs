//! A store's configuration: the named settings its keys were made with,
//! compared whole, written in its manifest as JSON and carried by its
//! runs as an id. It knows settings and their text; not what they mean.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::escape::escape;
use crate::fingerprint::fingerprint;

/// How the keys a store holds were made: named settings (the rung, the
/// transforms, the key's kind, ...), compared whole. Keys made with
/// different settings cannot be compared, so a store refuses a run whose
/// configuration differs from its own.
///
/// ```
/// use urinorm::store::Config;
/// let config = Config::new([("rung", "scheme"), ("key", "canonical")]);
/// assert_eq!(config.to_string(), "key=canonical, rung=scheme");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config(BTreeMap<String, String>);

impl Config {
    pub fn new<N: Into<String>, V: Into<String>>(
        settings: impl IntoIterator<Item = (N, V)>,
    ) -> Config {
        Config(
            settings
                .into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }

    /// The value of the setting `name`, if it has one.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// The names of the settings whose values differ from `other`'s (or
    /// that only one of the two has), in order.
    ///
    /// ```
    /// use urinorm::store::Config;
    /// let stored = Config::new([("rung", "scheme"), ("key", "canonical")]);
    /// let wanted = Config::new([("rung", "protocol"), ("key", "canonical"), ("transforms", "drop-fragment")]);
    /// assert_eq!(stored.differing(&wanted), ["rung", "transforms"]);
    /// ```
    pub fn differing<'a>(&'a self, other: &'a Config) -> Vec<&'a str> {
        let names: std::collections::BTreeSet<&str> = self
            .0
            .keys()
            .chain(other.0.keys())
            .map(String::as_str)
            .collect();
        names
            .into_iter()
            .filter(|&n| self.get(n) != other.get(n))
            .collect()
    }

    /// The settings as a JSON object.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(n, v)| (n.clone(), Value::String(v.clone())))
                .collect(),
        )
    }

    pub(super) fn from_json(value: &Value) -> Option<Config> {
        let settings = value
            .as_object()?
            .iter()
            .map(|(n, v)| Some((n.clone(), v.as_str()?.to_string())));
        Some(Config(settings.collect::<Option<_>>()?))
    }

    /// The id every run of a store carries: the fingerprint of the
    /// configuration's JSON text.
    pub(super) fn id(&self) -> [u8; 16] {
        fingerprint(self.to_json().to_string().as_bytes())
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no settings");
        }
        for (i, (name, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            // Whole, however long (a transform list is): only made inert.
            let (name, value) = (
                escape(name.as_bytes(), usize::MAX),
                escape(value.as_bytes(), usize::MAX),
            );
            write!(f, "{sep}{name}={value}")?;
        }
        Ok(())
    }
}
