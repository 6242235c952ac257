//! The protocol rung (RFC 3986 §6.2.4): crawler conventions that RFC 3986
//! leaves to practice, each a named transform that can be turned on or off,
//! bundled in presets that are only lists of names.
//!
//! Every transform works on the scheme rung's output, for the schemes it
//! makes sense for (http, https, ws, wss, with a host); any other URI passes
//! through unchanged. Transforms never re-encode a byte they do not mean to change,
//! and they apply in one fixed order, so the result is a fixed point.
//!
//! This module owns the configuration: the presets, the tracking list and
//! which transforms are on ([`Protocol`]). The transforms themselves are
//! declared in `catalogue` (names, docs, candidate tests), written by
//! `write` (one pass over a URI's components), with the work on each
//! component in `host`, `path` and `session` (session ids in paths and
//! queries).

mod catalogue;
mod host;
mod path;
mod session;
mod write;

use std::str::FromStr;
use std::sync::Arc;

use super::ia;
use super::scheme;
use super::site::SiteRewrite;
use crate::uri::UriRef;
pub use catalogue::{Transform, candidates};
pub(crate) use write::Scratch;

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

/// The names `drop-tracking-params` removes (`prefix*` for a prefix), as
/// given, and grouped by their first byte, lower-cased: a parameter is
/// compared only with the names that start as it does.
#[derive(Clone, Debug, PartialEq, Eq)]
struct TrackingList {
    names: Vec<String>,
    /// Each name as bytes and whether it is a prefix, ordered by first
    /// byte: those starting with byte `b` are `entries[starts[b]..starts[b + 1]]`.
    entries: Vec<(Box<[u8]>, bool)>,
    starts: Box<[u32; 257]>,
    /// Whether `*` (every name) is on the list.
    every: bool,
    /// Whether the empty name is on the list.
    empty: bool,
}

impl TrackingList {
    fn new(names: Vec<String>) -> TrackingList {
        let mut entries: Vec<(Box<[u8]>, bool)> = names
            .iter()
            .map(|t| match t.strip_suffix('*') {
                Some(prefix) => (prefix.as_bytes().into(), true),
                None => (t.as_bytes().into(), false),
            })
            .collect();
        let every = entries
            .iter()
            .any(|(name, prefix)| *prefix && name.is_empty());
        let empty = entries.iter().any(|(name, _)| name.is_empty());
        entries.retain(|(name, _)| !name.is_empty());
        let first = |name: &[u8]| usize::from(name[0].to_ascii_lowercase());
        entries.sort_by_key(|(name, _)| first(name));
        let mut starts = Box::new([0u32; 257]);
        for (name, _) in &entries {
            starts[first(name) + 1] += 1;
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        TrackingList {
            names,
            entries,
            starts,
            every,
            empty,
        }
    }

    /// Whether a parameter named `name` is on the list, case aside.
    fn contains(&self, name: &[u8]) -> bool {
        let Some(&first) = name.first() else {
            return self.empty;
        };
        if self.every {
            return true;
        }
        let b = usize::from(first.to_ascii_lowercase());
        let group = &self.entries[self.starts[b] as usize..self.starts[b + 1] as usize];
        group.iter().any(|(listed, prefix)| match prefix {
            true => name.len() >= listed.len() && name[..listed.len()].eq_ignore_ascii_case(listed),
            false => name.eq_ignore_ascii_case(listed),
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
}

/// Whether the protocol transforms apply: web URIs with a host. `http:/a`
/// (no authority) is no URL a crawler fetches, and its path has to keep the
/// `/.` guard.
pub(super) fn is_web(uri: &UriRef<'_>) -> bool {
    uri.offsets.authority.is_some()
        && uri
            .scheme()
            .is_some_and(|scheme| scheme::is_web_scheme(scheme.as_bytes()))
}

/// A parameter's name: the bytes before its first `=`.
pub(super) fn param_name(param: &[u8]) -> &[u8] {
    &param[..param.iter().position(|&b| b == b'=').unwrap_or(param.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_grouped_tracking_list_agrees_with_a_scan_of_its_names(list in prop::collection::vec("[a-zA-Z_]{0,5}\\*?", 0..6), name in "[a-zA-Z_]{0,6}") {
            let grouped = TrackingList::new(list.clone());
            let scanned = list.iter().any(|t| match t.strip_suffix('*') {
                Some(prefix) => name.len() >= prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix),
                None => name.eq_ignore_ascii_case(t),
            });
            prop_assert_eq!(grouped.contains(name.as_bytes()), scanned);
            // Each entry's own name (a prefix's, lengthened), in upper case:
            // listed.
            for t in &list {
                let listed = match t.strip_suffix('*') {
                    Some(prefix) => format!("{prefix}X"),
                    None => t.clone(),
                };
                prop_assert!(grouped.contains(listed.to_ascii_uppercase().as_bytes()), "{}", t);
            }
        }
    }
}
