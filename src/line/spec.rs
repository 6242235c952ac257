//! The one options model every front end maps onto: how a URI becomes its
//! key (the rung, the preset and the transforms added or removed, the
//! tracking list, the site rules, the key, the repairs, the resolution
//! rule, which URIs a crawler can fetch). The command line's flags,
//! Python's keyword arguments, the Polars plugin's and DuckDB's option text
//! are spellings of [`NormalizerSpec`]; what an option means, the order the
//! rules files apply in, and every refusal are decided here, once.
//!
//! It knows option names and values, and reads the files they name; it
//! knows no flag, keyword argument, SQL or line.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Columns;
use super::key::KeyFormat;
use crate::normalize::protocol::{Preset, ProtocolOptions, Transform};
use crate::normalize::{Normalizer, Rung};
use crate::resolve::SchemeRule;
use crate::rules::{RulesError, RulesFormat, RulesText, SiteRules};
use crate::sys::os_error::Reason;

/// Every option of a normalizer, by the name the text form, Python and
/// DuckDB give it (the command line spells them as flags).
///
/// The text form is `name=value` pairs separated by `;`, a list's values
/// separated by `,`; `%`, `,`, `;`, `=` and white space in a value are
/// percent-encoded (`%3B`). It is what DuckDB's functions and Spark's
/// columns take:
///
/// ```
/// use urinorm::line::spec::NormalizerSpec;
/// let spec: NormalizerSpec = "preset=aggressive; without=strip-www; key=surt".parse()?;
/// let normalizer = spec.normalizer()?;
/// assert_eq!(spec.to_string(), "preset=aggressive; without=strip-www; key=surt");
/// assert_eq!(spec.key.name(), "surt");
/// # Ok::<(), urinorm::line::spec::SpecError>(())
/// ```
///
/// A preset below the protocol rung is refused, in one sentence for every
/// front end:
///
/// ```
/// use urinorm::line::spec::NormalizerSpec;
/// let err = "rung=syntax; preset=safe".parse::<NormalizerSpec>()?.normalizer().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "a preset, added or removed transforms, a tracking list and site rules need the protocol rung, not the syntax rung"
/// );
/// # Ok::<(), urinorm::line::spec::SpecError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Shipped", into = "Shipped")]
pub struct NormalizerSpec {
    /// The rung named, if any: the scheme rung by default, the protocol
    /// rung when a protocol option is given ([`Rung::requested`]).
    pub rung: Option<Rung>,
    pub preset: Option<Preset>,
    pub with: Vec<Transform>,
    pub without: Vec<Transform>,
    /// The tracking parameter names of drop-tracking-params (`prefix*`
    /// for a prefix), replacing the built-in list.
    pub tracking_params: Option<TrackingParams>,
    /// The site rules files, in the order given; [`NormalizerSpec::rules_texts`]
    /// puts ClearURLs' first.
    pub rules: Vec<RulesFile>,
    pub key: KeyFormat,
    /// Repair what browsers repair (RFC 3986 Appendix C) in a reference
    /// and in its base.
    pub lenient: bool,
    /// Resolve a reference with its base's scheme by the non-strict rule of
    /// RFC 3986 §5.2.2.
    pub non_strict: bool,
    pub fetchable: Fetchable,
}

/// A text an option names: the file `name`, read when first needed, or
/// its text as given (`text`, with `name` what messages call it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextFile {
    pub name: String,
    pub text: Option<String>,
}

/// The tracking parameters' names, given as such or as a file of one
/// name a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrackingParams {
    Names(Vec<String>),
    File(TextFile),
}

impl TrackingParams {
    /// The list as the core takes it: one name a line.
    fn text(&self) -> Result<Cow<'_, str>, SpecError> {
        match self {
            TrackingParams::Names(names) => Ok(Cow::Owned(names.join("\n"))),
            TrackingParams::File(file) => file.read(),
        }
    }

    fn file_mut(&mut self) -> Option<&mut TextFile> {
        match self {
            TrackingParams::Names(_) => None,
            TrackingParams::File(file) => Some(file),
        }
    }
}

/// A site rules file and its format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RulesFile {
    pub format: RulesFormat,
    pub file: TextFile,
}

/// When only URIs a crawler can fetch are taken: a relative reference, or
/// an `http(s)` URI without a host, is rejected otherwise (RFC 9110 §4.2.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Fetchable {
    /// Where a frontier is fed or a key needs a host.
    #[default]
    Auto,
    Always,
    Never,
}

impl Fetchable {
    const ALL: [Fetchable; 3] = [Fetchable::Auto, Fetchable::Always, Fetchable::Never];

    /// The name options spell it with.
    pub const fn name(self) -> &'static str {
        match self {
            Fetchable::Auto => "auto",
            Fetchable::Always => "always",
            Fetchable::Never => "never",
        }
    }
}

/// Why options make no normalizer.
#[derive(Debug)]
pub enum SpecError {
    /// A value its option does not take: the sentence of its parser.
    Value(String),
    /// An option no front end has.
    UnknownOption(String),
    /// Text that is not `name=value`.
    NotAPair(String),
    /// Protocol-rung options with a lower rung named.
    NeedsProtocolRung(Rung),
    /// A file the options name cannot be read.
    Read { path: String, error: std::io::Error },
    /// A rules text that cannot be used.
    Rules(RulesError),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Value(sentence) => f.write_str(sentence),
            SpecError::UnknownOption(name) => write!(
                f,
                "unknown option '{}' ({})",
                crate::escape::escape_str(name),
                OPTIONS.join(", ")
            ),
            SpecError::NotAPair(pair) => write!(
                f,
                "an option is name=value, not '{}'",
                crate::escape::escape_str(pair)
            ),
            SpecError::NeedsProtocolRung(rung) => write!(
                f,
                "a preset, added or removed transforms, a tracking list and site rules need the protocol rung, not the {rung} rung"
            ),
            SpecError::Read { path, error } => write!(
                f,
                "cannot read '{}': {}",
                crate::escape::escape_str(path),
                Reason(error)
            ),
            SpecError::Rules(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SpecError {}

/// The options' names, in the order the text form writes them.
pub const OPTIONS: [&str; 12] = [
    "rung",
    "preset",
    "with",
    "without",
    "tracking_params",
    "tracking_params_file",
    "rules",
    "rules_clearurls",
    "key",
    "lenient",
    "non_strict",
    "fetchable",
];

/// The sentence of a value's parser as a [`SpecError`].
fn value<T>(parsed: Result<T, String>) -> Result<T, SpecError> {
    parsed.map_err(SpecError::Value)
}

/// The one value of `option`.
fn one<'v>(option: &str, values: &[&'v str]) -> Result<&'v str, SpecError> {
    match values {
        [value] => Ok(value),
        _ => Err(SpecError::Value(format!(
            "{option} takes one value, not {}",
            values.len()
        ))),
    }
}

/// A yes or no option: `true`/`false` (or `1`/`0`).
fn flag(option: &str, values: &[&str]) -> Result<bool, SpecError> {
    match one(option, values)? {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        other => Err(SpecError::Value(format!(
            "{option} is true or false, not '{}'",
            crate::escape::escape_str(other)
        ))),
    }
}

impl NormalizerSpec {
    /// Sets `option` (one of [`OPTIONS`], or `with_`, Python's spelling of
    /// `with`) from its values as text; a list option adds to what it held.
    ///
    /// ```
    /// use urinorm::line::spec::NormalizerSpec;
    /// let mut spec = NormalizerSpec::default();
    /// spec.set("with", &["sort-query", "drop-fragment"])?;
    /// spec.set("lenient", &["true"])?;
    /// assert_eq!(spec.to_string(), "with=sort-query,drop-fragment; lenient=true");
    /// assert!(spec.set("rung", &["highest"]).is_err());
    /// # Ok::<(), urinorm::line::spec::SpecError>(())
    /// ```
    pub fn set(&mut self, option: &str, values: &[&str]) -> Result<(), SpecError> {
        let transforms = |values: &[&str]| -> Result<Vec<Transform>, SpecError> {
            values.iter().map(|name| value(name.parse())).collect()
        };
        let files = |format| {
            values.iter().map(move |name| RulesFile {
                format,
                file: TextFile::named(name),
            })
        };
        match option {
            "rung" => self.rung = Some(value(one(option, values)?.parse())?),
            "preset" => self.preset = Some(value(one(option, values)?.parse())?),
            "with" | "with_" => self.with.extend(transforms(values)?),
            "without" => self.without.extend(transforms(values)?),
            "tracking_params" => {
                let names = values.iter().map(|name| name.to_string()).collect();
                self.tracking_params = Some(TrackingParams::Names(names))
            }
            "tracking_params_file" => {
                let file = TextFile::named(one(option, values)?);
                self.tracking_params = Some(TrackingParams::File(file))
            }
            "rules" => self.rules.extend(files(RulesFormat::Lines)),
            "rules_clearurls" => self.rules.extend(files(RulesFormat::ClearUrls)),
            "key" => self.key = value(one(option, values)?.parse())?,
            "lenient" => self.lenient = flag(option, values)?,
            "non_strict" => self.non_strict = flag(option, values)?,
            "fetchable" => {
                let name = one(option, values)?;
                self.fetchable = (Fetchable::ALL.into_iter())
                    .find(|f| f.name() == name)
                    .ok_or_else(|| {
                        SpecError::Value(format!(
                            "fetchable is auto, always or never, not '{}'",
                            crate::escape::escape_str(name)
                        ))
                    })?
            }
            other => return Err(SpecError::UnknownOption(other.to_string())),
        }
        Ok(())
    }

    /// Whether any option of the protocol rung is given.
    pub fn wants_protocol(&self) -> bool {
        self.preset.is_some()
            || !self.with.is_empty()
            || !self.without.is_empty()
            || self.tracking_params.is_some()
            || !self.rules.is_empty()
    }

    /// Whether any option names a rung or a transform.
    pub fn names_a_rung(&self) -> bool {
        self.rung.is_some() || self.wants_protocol()
    }

    /// The rung these options ask for, or why they contradict.
    pub fn rung(&self) -> Result<Rung, SpecError> {
        Rung::requested(self.rung, self.wants_protocol())
            .map_err(|e| SpecError::NeedsProtocolRung(e.rung))
    }

    /// These options, or the keys of a crawl frontier when none names a
    /// rung or a transform: [`FRONTIER_PRESET`](super::FRONTIER_PRESET)
    /// with [`FRONTIER_WITH`](super::FRONTIER_WITH), for `urinorm serve`,
    /// `dedup --seen`, `seen add`, Python's `SeenSet` and the Scrapy filter.
    pub fn or_frontier_default(self) -> NormalizerSpec {
        match self.names_a_rung() {
            true => self,
            false => NormalizerSpec {
                preset: Some(super::FRONTIER_PRESET.parse().expect("a preset's name")),
                with: super::FRONTIER_WITH.to_vec(),
                ..self
            },
        }
    }

    /// The rules files' texts, ClearURLs' first: their providers apply
    /// before the line rules. Files not read yet are read now.
    pub fn rules_texts(&self) -> Result<Vec<RulesText>, SpecError> {
        let in_order = (self
            .rules
            .iter()
            .filter(|r| r.format == RulesFormat::ClearUrls))
        .chain(self.rules.iter().filter(|r| r.format == RulesFormat::Lines));
        in_order
            .map(|rules| {
                Ok(RulesText {
                    name: rules.file.name.clone(),
                    format: rules.format,
                    text: rules.file.read()?.into_owned(),
                })
            })
            .collect()
    }

    /// The rules files compiled together, if any is named.
    pub fn site_rules(&self) -> Result<Option<SiteRules>, SpecError> {
        let texts = self.rules_texts()?;
        if texts.is_empty() {
            return Ok(None);
        }
        SiteRules::compile(&texts)
            .map(Some)
            .map_err(SpecError::Rules)
    }

    /// Reads every file the options name that is not read yet, so that
    /// they travel with the options (to a Polars plugin or a Spark
    /// executor) rather than be read where those run.
    pub fn read_files(&mut self) -> Result<(), SpecError> {
        for file in self.files_mut() {
            if file.text.is_none() {
                file.text = Some(file.read()?.into_owned());
            }
        }
        Ok(())
    }

    /// Checks the options without reading any file: what is told before a
    /// file that cannot be read.
    pub fn check(&self) -> Result<(), SpecError> {
        self.rung().map(drop)
    }

    /// The normalizer these options make. The rung is checked before any
    /// file is read: a lower rung never opens the tracking list or the rules.
    pub fn normalizer(&self) -> Result<Normalizer, SpecError> {
        self.check()?;
        let tracking_list = (self.tracking_params.as_ref())
            .map(TrackingParams::text)
            .transpose()?;
        let rules = self.site_rules()?.map(SiteRules::into_rewrite);
        let options = ProtocolOptions {
            preset: self.preset,
            with: &self.with,
            without: &self.without,
            tracking_list: tracking_list.as_deref(),
            rules: rules.as_ref(),
        };
        Normalizer::from_options(self.rung, &options)
            .map_err(|e| SpecError::NeedsProtocolRung(e.rung))
    }

    /// How a value is read before it is normalized: repaired if lenient,
    /// a reference with a scheme resolved by the rule asked for. A column,
    /// a base and key fields are the caller's to add.
    pub fn columns(&self) -> Columns {
        Columns {
            lenient: self.lenient,
            scheme_rule: match self.non_strict {
                true => SchemeRule::NonStrict,
                false => SchemeRule::Strict,
            },
            ..Columns::default()
        }
    }

    /// Whether a key needs a URI with a scheme and a host: a SURT, a host
    /// or a domain key, and the Internet Archive's keys (of URIs a crawler
    /// fetched).
    pub fn needs_host(&self) -> bool {
        self.key != KeyFormat::Canonical || self.preset.as_ref().is_some_and(preset_needs_host)
    }

    /// Whether only URIs a crawler can fetch are taken, for lines that feed
    /// a frontier (`frontier`) or not; `scheme_filter`: the caller keeps
    /// only some schemes, which also means a URI with a host.
    pub fn takes_only_fetchable(&self, frontier: bool, scheme_filter: bool) -> bool {
        match self.fetchable {
            Fetchable::Auto => frontier || self.needs_host() || scheme_filter,
            Fetchable::Always => true,
            Fetchable::Never => false,
        }
    }
}

/// Whether `preset` means URIs with a scheme and a host: the Internet
/// Archive's keys are of URIs a crawler fetched.
pub fn preset_needs_host(preset: &Preset) -> bool {
    preset.name == "ia"
}

impl TextFile {
    /// The file at `path`, to be read when needed.
    pub fn named(path: &str) -> TextFile {
        TextFile {
            name: path.to_string(),
            text: None,
        }
    }

    /// The text: as given, or the file's whole text (UTF-8, line endings
    /// untouched).
    pub fn read(&self) -> Result<Cow<'_, str>, SpecError> {
        if let Some(text) = &self.text {
            return Ok(Cow::Borrowed(text));
        }
        let data = std::fs::read(&self.name).map_err(|error| SpecError::Read {
            path: self.name.clone(),
            error,
        })?;
        String::from_utf8(data)
            .map(Cow::Owned)
            .map_err(|e| SpecError::Rules(not_utf8(&self.name, e.as_bytes(), e.utf8_error())))
    }
}

/// A file that is not UTF-8 text, at its first bad byte.
fn not_utf8(name: &str, data: &[u8], error: std::str::Utf8Error) -> RulesError {
    let at = error.valid_up_to();
    RulesError {
        file: name.to_string(),
        line: Some(memchr::memchr_iter(b'\n', &data[..at]).count() + 1),
        problem: format!("not UTF-8 text (byte 0x{:02x} at offset {at})", data[at]),
    }
}

impl FromStr for NormalizerSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<NormalizerSpec, SpecError> {
        let mut spec = NormalizerSpec::default();
        for pair in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, values)) = pair.split_once('=') else {
                return Err(SpecError::NotAPair(pair.to_string()));
            };
            let values: Vec<String> = (values.split(',').map(str::trim))
                .filter(|v| !v.is_empty())
                .map(decode)
                .collect::<Result<_, _>>()?;
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            spec.set(name.trim(), &values)?;
        }
        Ok(spec)
    }
}

/// The bytes a value cannot hold as written in the text form.
fn must_encode(c: char) -> bool {
    matches!(c, '%' | ',' | ';' | '=') || c.is_whitespace() || c.is_control()
}

fn encode(value: &str) -> Cow<'_, str> {
    if !value.contains(must_encode) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match must_encode(c) {
            true => {
                let mut bytes = [0; 4];
                for byte in c.encode_utf8(&mut bytes).bytes() {
                    out.push_str(&format!("%{byte:02X}"));
                }
            }
            false => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A value with its `%XX` decoded (a `%` not before two hex digits is
/// kept); refused when the bytes decoded are not UTF-8.
fn decode(value: &str) -> Result<String, SpecError> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&high), Some(&low)) => hex(high).zip(hex(low)),
            _ => None,
        };
        match escaped {
            Some((high, low)) => {
                out.push(high << 4 | low);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| {
        SpecError::Value(format!(
            "'{}' is not UTF-8 once its %XX are decoded",
            crate::escape::escape_str(value)
        ))
    })
}

impl fmt::Display for NormalizerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pairs: Vec<(&str, Vec<Cow<'_, str>>)> = Vec::new();
        let names = |list: &[Transform]| list.iter().map(|t| Cow::Borrowed(t.name())).collect();
        if let Some(rung) = self.rung {
            pairs.push(("rung", vec![Cow::Borrowed(rung.name())]));
        }
        if let Some(preset) = self.preset {
            pairs.push(("preset", vec![Cow::Borrowed(preset.name)]));
        }
        for (option, list) in [("with", &self.with), ("without", &self.without)] {
            if !list.is_empty() {
                pairs.push((option, names(list)));
            }
        }
        match &self.tracking_params {
            Some(TrackingParams::Names(list)) => pairs.push((
                "tracking_params",
                list.iter().map(|n| Cow::Borrowed(n.as_str())).collect(),
            )),
            Some(TrackingParams::File(file)) => pairs.push((
                "tracking_params_file",
                vec![Cow::Borrowed(file.name.as_str())],
            )),
            None => {}
        }
        // In the order given, so that the text parses to the same list.
        for run in self.rules.chunk_by(|a, b| a.format == b.format) {
            let option = match run[0].format {
                RulesFormat::Lines => "rules",
                RulesFormat::ClearUrls => "rules_clearurls",
            };
            let files = run.iter().map(|r| Cow::Borrowed(r.file.name.as_str()));
            pairs.push((option, files.collect()));
        }
        if self.key != KeyFormat::Canonical {
            pairs.push(("key", vec![Cow::Borrowed(self.key.name())]));
        }
        for (option, on) in [("lenient", self.lenient), ("non_strict", self.non_strict)] {
            if on {
                pairs.push((option, vec![Cow::Borrowed("true")]));
            }
        }
        if self.fetchable != Fetchable::Auto {
            pairs.push(("fetchable", vec![Cow::Borrowed(self.fetchable.name())]));
        }
        for (i, (option, values)) in pairs.iter().enumerate() {
            let separator = if i == 0 { "" } else { "; " };
            let values: Vec<Cow<'_, str>> = values.iter().map(|v| encode(v)).collect();
            write!(f, "{separator}{option}={}", values.join(","))?;
        }
        Ok(())
    }
}

/// A spec as it travels (serde): its text form, and the texts of the
/// files it names that were read before it left, in the order the text
/// form names them (tracking list, then rules).
#[derive(Serialize, Deserialize)]
struct Shipped {
    options: String,
    texts: Vec<Option<String>>,
}

impl NormalizerSpec {
    /// The files the options name, in the order the text form names them.
    fn files(&self) -> impl Iterator<Item = &TextFile> {
        let tracking = match &self.tracking_params {
            Some(TrackingParams::File(file)) => Some(file),
            _ => None,
        };
        tracking
            .into_iter()
            .chain(self.rules.iter().map(|r| &r.file))
    }

    /// [`NormalizerSpec::files`], to fill in.
    fn files_mut(&mut self) -> impl Iterator<Item = &mut TextFile> {
        let tracking = (self.tracking_params.as_mut()).and_then(TrackingParams::file_mut);
        tracking
            .into_iter()
            .chain(self.rules.iter_mut().map(|r| &mut r.file))
    }
}

impl From<NormalizerSpec> for Shipped {
    fn from(spec: NormalizerSpec) -> Shipped {
        Shipped {
            options: spec.to_string(),
            texts: spec.files().map(|f| f.text.clone()).collect(),
        }
    }
}

impl TryFrom<Shipped> for NormalizerSpec {
    type Error = SpecError;

    fn try_from(shipped: Shipped) -> Result<NormalizerSpec, SpecError> {
        let mut spec: NormalizerSpec = shipped.options.parse()?;
        for (file, text) in spec.files_mut().zip(shipped.texts) {
            file.text = text;
        }
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Text the form accepts is written back as text that parses to
        /// the same options (values with the bytes it must encode among
        /// them; the fuzz target `spec_text` tries any text).
        #[test]
        fn accepted_text_round_trips(pairs in proptest::collection::vec((
            prop::sample::select(vec!["rules", "rules_clearurls", "tracking_params", "tracking_params_file", "with", "key", "lenient", "preset"]),
            "[a-z%;,= \u{e9}\t2F-]{0,10}",
        ), 0..6)) {
            let text: Vec<String> = pairs.iter().map(|(name, value)| format!("{name}={value}")).collect();
            if let Ok(spec) = text.join(";").parse::<NormalizerSpec>() {
                let written = spec.to_string();
                prop_assert_eq!(written.parse::<NormalizerSpec>().unwrap(), spec.clone());
                prop_assert_eq!(spec.to_string(), written);
            }
        }
    }

    #[test]
    fn the_text_form_round_trips_values_it_must_encode() {
        let mut spec = NormalizerSpec::default();
        spec.set("rules", &["/tmp/a;b,c d%.rules"]).unwrap();
        spec.set("tracking_params", &["utm_*", "fbclid"]).unwrap();
        let text = spec.to_string();
        assert_eq!(
            text,
            "tracking_params=utm_*,fbclid; rules=/tmp/a%3Bb%2Cc%20d%25.rules"
        );
        assert_eq!(text.parse::<NormalizerSpec>().unwrap(), spec);
    }

    #[test]
    fn only_two_hex_digits_are_decoded_and_the_result_must_be_utf8() {
        let spec: NormalizerSpec = "tracking_params=a%2Cb,%+1,100%,%41".parse().unwrap();
        let Some(TrackingParams::Names(names)) = spec.tracking_params else {
            panic!("no names");
        };
        assert_eq!(names, ["a,b", "%+1", "100%", "A"]);
        let err = "rules=%FF".parse::<NormalizerSpec>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "'%FF' is not UTF-8 once its %XX are decoded"
        );
    }

    #[test]
    fn the_text_form_keeps_the_rules_in_the_order_given() {
        let text = "rules_clearurls=a; rules=b,c; rules_clearurls=d";
        let spec: NormalizerSpec = text.parse().unwrap();
        assert_eq!(spec.to_string(), text);
        assert_eq!(spec.to_string().parse::<NormalizerSpec>().unwrap(), spec);
    }

    #[test]
    fn rules_apply_clearurls_first_whatever_the_order_given() {
        let mut spec = NormalizerSpec::default();
        for (option, name) in [("rules", "mine"), ("rules_clearurls", "theirs")] {
            spec.rules.push(RulesFile {
                format: match option {
                    "rules" => RulesFormat::Lines,
                    _ => RulesFormat::ClearUrls,
                },
                file: TextFile {
                    name: name.into(),
                    text: Some(String::new()),
                },
            });
        }
        let names: Vec<String> = spec
            .rules_texts()
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["theirs", "mine"]);
    }

    #[test]
    fn a_lower_rung_is_refused_before_any_file_is_read() {
        let spec: NormalizerSpec = "rung=scheme; rules=/no/such/file".parse().unwrap();
        assert!(matches!(
            spec.normalizer(),
            Err(SpecError::NeedsProtocolRung(Rung::Scheme))
        ));
        let spec: NormalizerSpec = "rules=/no/such/file".parse().unwrap();
        assert!(matches!(spec.normalizer(), Err(SpecError::Read { .. })));
    }

    #[test]
    fn a_file_not_utf8_names_its_line_and_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.rules");
        std::fs::write(&path, b"example.com lowercase-path\n\xff\n").unwrap();
        let spec: NormalizerSpec = format!("rules={}", path.display()).parse().unwrap();
        let Err(SpecError::Rules(e)) = spec.normalizer() else {
            panic!("not refused as not UTF-8");
        };
        assert_eq!(
            (e.line, e.problem.as_str()),
            (Some(2), "not UTF-8 text (byte 0xff at offset 27)")
        );
    }

    #[test]
    fn unknown_options_and_values_say_what_is_known() {
        let err = "rung=scheme; colour=blue"
            .parse::<NormalizerSpec>()
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown option 'colour' (rung, preset, with,")
        );
        let err = "lenient=maybe".parse::<NormalizerSpec>().unwrap_err();
        assert_eq!(err.to_string(), "lenient is true or false, not 'maybe'");
        let err = "preset".parse::<NormalizerSpec>().unwrap_err();
        assert_eq!(err.to_string(), "an option is name=value, not 'preset'");
    }

    #[test]
    fn the_frontier_default_applies_only_when_nothing_names_a_rung() {
        let default = NormalizerSpec::default().or_frontier_default();
        assert_eq!(default.to_string(), "preset=safe; with=sort-query-pairs");
        let named: NormalizerSpec = "rung=syntax".parse().unwrap();
        assert_eq!(named.clone().or_frontier_default(), named);
    }

    #[test]
    fn a_shipped_spec_carries_the_texts_read_before_it_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.rules");
        std::fs::write(&path, "example.com lowercase-path\n").unwrap();
        let mut spec: NormalizerSpec =
            format!("tracking_params=a,b; rules={}; key=host", path.display())
                .parse()
                .unwrap();
        spec.read_files().unwrap();
        let json = serde_json::to_string(&spec).unwrap();
        std::fs::remove_file(&path).unwrap();
        let back: NormalizerSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, spec);
        assert!(back.normalizer().is_ok(), "the rules travelled with it");
    }
}
