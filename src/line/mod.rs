//! What a line of a URL list or a link dataset stands for: which column
//! holds the URI, what it is resolved against, whether it is repaired
//! first ([`Columns`]); and the engine's line mapper that makes each line's
//! key from that ([`NormalizeLines`]), which `normalize` and `dedup` run on
//! and whose [`Columns::with_uri`] the ladder shares.
//!
//! It knows lines and columns and calls the RFC modules; it knows nothing
//! of threads or files.

pub mod crawl_index;
pub mod key;
pub mod scope;
pub mod spec;

use spec::NormalizerSpec;

use std::ops::Range;

use crate::error::InvalidUri;
use crate::lenient::{self, Repair};
use crate::line::key::{KeyFormat, Site};
use crate::line::scope::Scope;
use crate::normalize::protocol::Transform;
use crate::normalize::{Changes, Normalizer, Scratch};
use crate::pipeline::{Fault, LineMapper, Mapped, Note, NoteKind, Rejection, Within};
use crate::resolve::{SchemeRule, resolve_into};
use crate::rules::Events;
use crate::scratch::Slot;
use crate::surt::normalize_surt_into;
use crate::uri::{SchemeHost, UriRef};

/// Where the URI is in a line, and what is done to it before normalizing.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    /// The 0-based column holding the URI; `None`: the whole line.
    pub field: Option<usize>,
    pub delimiter: u8,
    /// 0-based columns whose normalized values, joined, are the dedup key.
    pub key_fields: Vec<usize>,
    /// The 0-based column the key is written into, replacing it (one past
    /// the last: appended as a new column), the URI's column kept as it
    /// is; `None`: the key replaces the URI.
    pub key_into: Option<usize>,
    /// The 0-based column holding the base URI to resolve against.
    pub base_field: Option<usize>,
    /// One base URI for every line.
    pub base: Option<String>,
    /// Apply the lenient repairs first.
    pub lenient: bool,
    /// How a reference with a scheme is resolved (RFC 3986 §5.2.2):
    /// strictly, by default.
    pub scheme_rule: SchemeRule,
}

/// The buffers [`Columns`] reuses from one line to the next, so that no
/// line allocates: a repaired value, a resolved reference, and the column
/// boundaries of the line. A thread makes one and lends it to every call.
#[derive(Debug, Default)]
pub struct ColumnScratch {
    repaired: Vec<u8>,
    repaired_base: Vec<u8>,
    resolved: Vec<u8>,
    columns: Vec<Range<usize>>,
}

impl Columns {
    /// Whether a line is its URI as written: no column, base or repair.
    pub fn is_plain(&self) -> bool {
        self.field.is_none() && self.base.is_none() && !self.lenient
    }

    fn fixed_base(&self) -> Option<&[u8]> {
        self.base.as_deref().map(str::as_bytes)
    }

    /// Calls `with` on the URI `line` stands for (its column, repaired,
    /// resolved against its base), and returns what it returned with the
    /// repairs made (as [`Repair::bit`]s).
    ///
    /// ```
    /// use urinorm::line::{ColumnScratch, Columns};
    /// let columns = Columns { field: Some(1), base_field: Some(0), delimiter: b'\t', ..Columns::default() };
    /// let mut scratch = ColumnScratch::default();
    /// let (uri, _) = columns.with_uri(b"http://a/b/c\t../d", &mut scratch, |uri| Ok(uri.to_vec()))?;
    /// assert_eq!(uri, b"http://a/d");
    /// # Ok::<(), urinorm::pipeline::Rejection>(())
    /// ```
    pub fn with_uri<T>(
        &self,
        line: &[u8],
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<(T, u32), Rejection> {
        if self.is_plain() {
            // The line is the URI: no buffer, no repair, no base.
            let with =
                with(line).map_err(|e| e.map_invalid(|e| lenient::explain_rejection(line, e)))?;
            return Ok((with, 0));
        }
        let Some(field) = self.field else {
            return self.prepare(line, None, self.fixed_base(), scratch, with);
        };
        split_columns(line, self.delimiter, &mut scratch.columns);
        let value = column(line, &scratch.columns, field)?;
        let base = match self.base_field {
            Some(m) => Some(column(line, &scratch.columns, m)?),
            None => self.fixed_base(),
        };
        self.prepare(value, Some(field), base, scratch, with)
    }

    /// Calls `with` on the URI `reference` stands for: repaired if lenient,
    /// and resolved against `base` if given (else against the fixed base,
    /// if any); returns what it returned with the repairs made, as
    /// [`Columns::with_uri`] does for a line. For a reference and its base
    /// that come apart (two columns of a dataframe).
    ///
    /// ```
    /// use urinorm::line::{ColumnScratch, Columns};
    /// let columns = Columns { lenient: true, ..Columns::default() };
    /// let mut scratch = ColumnScratch::default();
    /// let (uri, _) = columns.with_reference(b" ../d ", Some(b"http://a/b/c"), &mut scratch, |uri| Ok(uri.to_vec()))?;
    /// assert_eq!(uri, b"http://a/d");
    /// # Ok::<(), urinorm::pipeline::Rejection>(())
    /// ```
    pub fn with_reference<T>(
        &self,
        reference: &[u8],
        base: Option<&[u8]>,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<(T, u32), Rejection> {
        self.prepare(reference, None, base.or(self.fixed_base()), scratch, with)
    }

    /// Calls `with` on `value` (column `field`, or the whole line) repaired
    /// if lenient and resolved against `base` if any (repaired too). A
    /// rejection counts its
    /// offset in the user's bytes: the column's, the base column's, or (past
    /// a resolution) the resolved URI's. A strict run's rejection says which
    /// repair would have saved the line.
    fn prepare<T>(
        &self,
        value: &[u8],
        field: Option<usize>,
        base: Option<&[u8]>,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<(T, u32), Rejection> {
        let number = |n: usize| u32::try_from(n + 1).unwrap_or(u32::MAX);
        let in_value = field.map_or(Within::Text, |n| Within::Field(number(n)));
        let ColumnScratch {
            repaired,
            repaired_base,
            resolved,
            ..
        } = scratch;
        repaired.clear();
        let notes = if self.lenient {
            lenient::repair(value, repaired)
        } else {
            0
        };
        let text = if notes == 0 { value } else { &repaired[..] };
        // An error in `text`: at the user's byte, with the repair that
        // would have avoided it when the run is strict.
        let in_text = |e: Rejection| {
            let e = e.within(in_value).map_invalid(|e| match notes {
                0 => e,
                _ => e.at(lenient::original_offset(value, e.offset())),
            });
            match self.lenient {
                true => e,
                false => e.map_invalid(|e| lenient::explain_rejection(value, e)),
            }
        };
        let Some(base) = base else {
            return Ok((with(text).map_err(in_text)?, notes));
        };
        // A base is repaired as the reference is: a link dataset's bases
        // are as browsers wrote them.
        repaired_base.clear();
        let base_notes = if self.lenient {
            lenient::repair(base, repaired_base)
        } else {
            0
        };
        let base_text = if base_notes == 0 {
            base
        } else {
            &repaired_base[..]
        };
        let in_base = |e: InvalidUri| {
            let e = match base_notes {
                0 => e,
                _ => e.at(lenient::original_offset(base, e.offset())),
            };
            let within = match self.base_field {
                Some(m) => Within::BaseField(number(m)),
                None => Within::Text,
            };
            Rejection::from(e).within(within)
        };
        let notes = notes | base_notes;
        // A base that is not a URI rejects the line, with its reason.
        let base = UriRef::parse_bytes(base_text).map_err(in_base)?;
        let reference = UriRef::parse_bytes(text).map_err(|e| in_text(e.into()))?;
        resolved.clear();
        resolve_into(&base, &reference, self.scheme_rule, resolved).map_err(in_base)?;
        let in_resolved = |e: Rejection| e.within(Within::Resolved(field.map(number)));
        Ok((with(resolved).map_err(in_resolved)?, notes))
    }
}

/// The boundaries of `line`'s columns, into `columns`.
fn split_columns(line: &[u8], delimiter: u8, columns: &mut Vec<Range<usize>>) {
    columns.clear();
    let mut from = 0;
    for end in memchr::memchr_iter(delimiter, line).chain([line.len()]) {
        columns.push(from..end);
        from = end + 1;
    }
}

/// Column `n` of `line`, or why the line lacks it.
fn column<'l>(line: &'l [u8], columns: &[Range<usize>], n: usize) -> Result<&'l [u8], Rejection> {
    let missing = Fault::MissingField { length: line.len() };
    columns
        .get(n)
        .map(|r| &line[r.clone()])
        .ok_or(Rejection::new(missing))
}

/// The preset of a frontier's keys when no option names a rung or a
/// transform (`urinorm serve`, `dedup --seen`, `seen add`, Python's
/// `SeenSet`, the Scrapy filter), with [`FRONTIER_WITH`]: a fragment,
/// tracking and session parameters and the order of query parameters make
/// no other page to fetch. Scrapy's own request fingerprint merges
/// fragments and parameter order as well.
pub const FRONTIER_PRESET: &str = "safe";

/// The transforms a frontier's default adds to [`FRONTIER_PRESET`].
pub const FRONTIER_WITH: &[Transform] = &[Transform::SortQueryPairs];

/// A [`Normalizer`] as the engine's line mapper.
pub struct NormalizeLines {
    pub normalizer: Normalizer,
    pub key: KeyFormat,
    pub columns: Columns,
    /// Which canonical URIs are in scope; the others are filtered out.
    pub scope: Option<Scope>,
    /// What each line's [`Mapped::site`] is, for per-site caps.
    pub site: Option<Site>,
    /// Only URIs a crawler can fetch are taken: a relative reference, or
    /// an `http(s)` URI without a host, is rejected
    /// ([`SchemeHost::fetchable`]). What feeds a frontier wants this.
    pub fetchable: bool,
    /// With `fetchable`, only URIs of a scheme a crawler fetches are taken
    /// ([`SchemeHost::crawled`]): the others (`mailto:`, `javascript:`,
    /// ...) are rejected. A frontier's default, short of a scheme filter.
    pub crawled: bool,
}

/// The buffers [`NormalizeLines`] reuses from one line (or value) to the
/// next: in the worker's scratch [`Slot`], or a thread's own.
#[derive(Debug, Default)]
pub struct KeyScratch {
    columns: ColumnScratch,
    normalize: Scratch,
    /// The site of the line being mapped, until it is appended.
    site: Vec<u8>,
}

/// What the note bits count: the lenient repairs, then what site rules
/// did (from bit [`RULE_NOTES`] on, in [`Events::NAMED`]'s order).
const NOTES: [Note; 8] = [
    repair_note(Repair::ALL[0]),
    repair_note(Repair::ALL[1]),
    repair_note(Repair::ALL[2]),
    repair_note(Repair::ALL[3]),
    repair_note(Repair::ALL[4]),
    rules_note(Events::NAMED[0].1),
    rules_note(Events::NAMED[1].1),
    rules_note(Events::NAMED[2].1),
];

/// The first note bit of the site rules' events.
const RULE_NOTES: u32 = Repair::ALL.len() as u32;

const fn repair_note(repair: Repair) -> Note {
    Note {
        name: repair.name(),
        kind: NoteKind::Repair,
    }
}

const fn rules_note(name: &'static str) -> Note {
    Note {
        name,
        kind: NoteKind::Rules,
    }
}

/// The note bits of what the site rules did in `changes`.
fn rule_notes(changes: Changes) -> u32 {
    changes.site_events().bits() << RULE_NOTES
}

impl LineMapper for NormalizeLines {
    fn map_line(
        &self,
        line: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Slot,
    ) -> Result<Option<Mapped>, Rejection> {
        let start = out.len();
        let scratch: &mut KeyScratch = scratch.get();
        let Some(mut mapped) = self.map_uri(line, out, scratch)? else {
            out.truncate(start);
            return Ok(None);
        };
        if self.site.is_some() {
            let at = out.len();
            out.extend_from_slice(&scratch.site);
            mapped.site = (!scratch.site.is_empty()).then_some(at..out.len());
        }
        Ok(Some(mapped))
    }

    fn note_names(&self) -> &[Note] {
        &NOTES
    }
}

impl NormalizeLines {
    /// A mapper with no scope filter and no sites.
    pub fn new(normalizer: Normalizer, key: KeyFormat, columns: Columns) -> NormalizeLines {
        NormalizeLines {
            normalizer,
            key,
            columns,
            scope: None,
            site: None,
            fetchable: false,
            crawled: false,
        }
    }

    /// The line's key and output, or `None` when its URI is out of scope.
    fn map_uri(
        &self,
        line: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut KeyScratch,
    ) -> Result<Option<Mapped>, Rejection> {
        let KeyScratch {
            columns: column_scratch,
            normalize,
            site,
        } = scratch;
        if self.columns.is_plain() && self.key == KeyFormat::Canonical {
            // The hot path: no copy at all when the line is already canonical.
            let start = out.len();
            let (changed, changes) = self
                .normalizer
                .rewrite_if_changed(line, out, normalize)
                .map_err(|e| {
                    Rejection::from(e).map_invalid(|e| lenient::explain_rejection(line, e))
                })?;
            let canonical = if changed { &out[start..] } else { line };
            let judged = self.judge(canonical, site);
            if !matches!(judged, Ok(true)) {
                out.truncate(start);
                return judged.map(|_| None);
            }
            let mapped = match changed {
                true => Mapped::key(start..out.len()),
                false => Mapped::unchanged(),
            };
            return Ok(Some(Mapped {
                notes: rule_notes(changes),
                ..mapped
            }));
        }
        let Some(field) = self.columns.field else {
            let start = out.len();
            let (in_scope, notes) = self.columns.with_uri(line, column_scratch, |uri| {
                self.write_key(uri, out, true, normalize, site)
            })?;
            return Ok(in_scope.map(|rule_notes| Mapped {
                notes: notes | rule_notes,
                ..Mapped::key(start..out.len())
            }));
        };
        split_columns(line, self.columns.delimiter, &mut column_scratch.columns);
        let columns = &column_scratch.columns;
        let base = match self.columns.base_field {
            Some(m) => Some(column(line, columns, m)?),
            None => self.columns.fixed_base(),
        };
        let start = out.len();
        let value = column(line, columns, field)?;
        // The line, with the URI's column (or the one the key goes into)
        // replaced by its key, or the key appended as a new column.
        let (into, append) = match self.columns.key_into {
            None => (columns[field].clone(), false),
            Some(n) if n == columns.len() => (line.len()..line.len(), true),
            Some(n) => (column(line, columns, n).map(|_| columns[n].clone())?, false),
        };
        out.extend_from_slice(&line[..into.start]);
        if append {
            out.push(self.columns.delimiter);
        }
        let key_start = out.len();
        let (in_scope, notes) = self
            .columns
            .prepare(value, Some(field), base, column_scratch, |uri| {
                self.write_key(uri, out, true, normalize, site)
            })
            .inspect_err(|_| out.truncate(start))?;
        let Some(rule_notes) = in_scope else {
            return Ok(None);
        };
        let notes = notes | rule_notes;
        let key_range = key_start..out.len();
        out.extend_from_slice(&line[into.end..]);
        let output = start..out.len();
        if self.columns.key_fields.is_empty() {
            return Ok(Some(Mapped {
                key: Some(key_range),
                output: Some(output),
                notes,
                site: None,
            }));
        }
        // The key: the named columns, normalized, joined by the delimiter.
        let key_start = out.len();
        for (i, &k) in self.columns.key_fields.iter().enumerate() {
            if i > 0 {
                out.push(self.columns.delimiter);
            }
            if k == field {
                out.extend_from_within(key_range.clone());
            } else {
                let value = column(line, &column_scratch.columns, k)
                    .inspect_err(|_| out.truncate(start))?;
                self.columns
                    .prepare(value, Some(k), None, column_scratch, |uri| {
                        self.write_key(uri, out, false, normalize, site)
                    })
                    .inspect_err(|_| out.truncate(start))?;
            }
        }
        Ok(Some(Mapped {
            key: Some(key_start..out.len()),
            output: Some(output),
            notes,
            site: None,
        }))
    }

    /// Whether the line whose URI has the canonical form `canonical` is in
    /// scope (an error if it must be fetchable and is not); keeps its site
    /// in `kept` (for [`Mapped::site`]) when caps ask for it.
    #[inline]
    fn judge(&self, canonical: &[u8], kept: &mut Vec<u8>) -> Result<bool, Rejection> {
        // Most runs judge nothing: they pay this test, not a call (callgrind:
        // 27 instructions a line for the call that returned at once).
        match self.judges() {
            false => Ok(true),
            true => self.judge_parts(canonical, kept),
        }
    }

    /// [`NormalizeLines::judge`] for a mapper that judges.
    #[inline(never)]
    fn judge_parts(&self, canonical: &[u8], kept: &mut Vec<u8>) -> Result<bool, Rejection> {
        let parts = SchemeHost::of_valid(canonical);
        let fetched = match (self.fetchable, self.crawled) {
            (true, true) => parts.crawled(),
            (true, false) => parts.fetchable(),
            (false, _) => Ok(()),
        };
        fetched?;
        if let Some(site) = self.site {
            kept.clear();
            kept.extend_from_slice(site.of(&parts).unwrap_or_default());
        }
        Ok(self
            .scope
            .as_ref()
            .is_none_or(|scope| scope.admits_split(canonical, &parts)))
    }

    /// The mapper of `spec`'s options (made into `normalizer`) for values
    /// that come one at a time, not in lines: a dataframe's column, a SQL
    /// function's argument. They take what the options say is fetchable.
    pub fn of_values(spec: &NormalizerSpec, normalizer: Normalizer) -> NormalizeLines {
        NormalizeLines {
            fetchable: spec.takes_only_fetchable(false, false),
            ..NormalizeLines::new(normalizer, spec.key, spec.columns())
        }
    }

    /// Appends the key of one value to `out`: `reference` repaired and
    /// resolved against `base` (or the fixed base) as the columns say, and
    /// judged fetchable as a line is. On error nothing is appended. Values
    /// have no scope (a mapper [`NormalizeLines::of_values`] makes): a
    /// scope filters lines.
    ///
    /// ```
    /// use urinorm::line::spec::NormalizerSpec;
    /// use urinorm::line::{KeyScratch, NormalizeLines};
    /// let spec: NormalizerSpec = "key=host; lenient=true".parse()?;
    /// let values = NormalizeLines::of_values(&spec, spec.normalizer()?);
    /// let (mut out, mut scratch) = (Vec::new(), KeyScratch::default());
    /// values.write_value_key(b" ../d ", Some(b"http://A/b/c"), &mut out, &mut scratch)?;
    /// assert_eq!(out, b"a");
    /// // A host key takes only what a crawler can fetch.
    /// assert!(values.write_value_key(b"../d", None, &mut out, &mut scratch).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_value_key(
        &self,
        reference: &[u8],
        base: Option<&[u8]>,
        out: &mut Vec<u8>,
        scratch: &mut KeyScratch,
    ) -> Result<(), Rejection> {
        debug_assert!(self.scope.is_none(), "values are not scoped");
        let KeyScratch {
            columns,
            normalize,
            site,
        } = scratch;
        let mut write = |uri: &[u8]| self.write_key(uri, out, true, normalize, site).map(drop);
        if base.is_none() && self.columns.is_plain() {
            return write(reference);
        }
        (self.columns.with_reference(reference, base, columns, write)).map(drop)
    }

    /// Why a value has no key, `error` being what
    /// [`NormalizeLines::write_value_key`] said of it and `base` the base it
    /// was given: the error's sentence, or, when the base is at fault,
    /// `the base: ` and why, as resolution's errors name it.
    ///
    /// ```
    /// use urinorm::line::spec::NormalizerSpec;
    /// use urinorm::line::{KeyScratch, NormalizeLines};
    /// let spec = NormalizerSpec::default();
    /// let values = NormalizeLines::of_values(&spec, spec.normalizer()?);
    /// let (mut out, mut scratch) = (Vec::new(), KeyScratch::default());
    /// let base = Some(&b"no/scheme"[..]);
    /// let error = values.write_value_key(b"d", base, &mut out, &mut scratch).unwrap_err();
    /// assert!(values.value_refusal(base, &error).starts_with("the base: "));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn value_refusal(&self, base: Option<&[u8]>, error: &Rejection) -> String {
        // Resolution refuses only a base without a scheme (§5.2.1); a
        // lenient run reads the base repaired.
        let mut repaired = Vec::new();
        let base = base.map(|base| match self.columns.lenient {
            true if lenient::repair(base, &mut repaired) != 0 => &repaired[..],
            _ => base,
        });
        let at_fault = base.map(UriRef::parse_bytes).and_then(|base| match base {
            Ok(base) if base.scheme().is_some() => None,
            Ok(_) => Some(error.clone()),
            Err(e) => Some(Rejection::from(e)),
        });
        match at_fault {
            Some(e) => format!("the base: {e}"),
            None => error.to_string(),
        }
    }

    /// Whether a line's canonical form is looked at before it is taken.
    fn judges(&self) -> bool {
        self.scope.is_some() || self.site.is_some() || self.fetchable
    }

    /// The settings its keys depend on, by name: what a seen store records,
    /// so that keys made differently are never compared. The rung and the
    /// key's kind; at the protocol rung the transforms (in the order they
    /// apply) and the tracking list; the Public Suffix List, when
    /// `strip-www` or a domain key use it; the key columns and their
    /// delimiter.
    ///
    /// ```
    /// use urinorm::line::key::KeyFormat;
    /// use urinorm::line::{Columns, NormalizeLines};
    /// use urinorm::normalize::{Normalizer, Rung};
    /// let lines = NormalizeLines::new(Normalizer::new(Rung::Scheme), KeyFormat::Canonical, Columns::default());
    /// assert_eq!(lines.key_settings(), [("rung", "scheme".into()), ("key", "canonical".into())]);
    /// ```
    pub fn key_settings(&self) -> Vec<(&'static str, String)> {
        let mut settings = vec![
            ("rung", self.normalizer.rung().name().to_string()),
            ("key", self.key.name().to_string()),
        ];
        if let Some(protocol) = self.normalizer.protocol() {
            let names: Vec<&str> = protocol.transforms().map(|t| t.name()).collect();
            settings.push(("transforms", names.join(",")));
            if protocol.contains(Transform::DropTrackingParams) {
                settings.push(("tracking", protocol.tracking_setting()));
            }
        }
        if let Some(rules) = self.normalizer.rules() {
            settings.push(("rules", rules.describe().to_string()));
        }
        // Which `www.` labels go, and what a domain key is, depend on the
        // public suffixes.
        let strips_www = self
            .normalizer
            .protocol()
            .is_some_and(|p| p.contains(Transform::StripWww));
        if strips_www || self.key == KeyFormat::Domain {
            settings.push(("psl", crate::domain::suffix_list().describe()));
        }
        if !self.columns.key_fields.is_empty() {
            let fields: Vec<String> = self
                .columns
                .key_fields
                .iter()
                .map(|k| (k + 1).to_string())
                .collect();
            settings.push(("key-fields", fields.join(",")));
            settings.push((
                "delimiter",
                crate::escape::escape(&[self.columns.delimiter], 4),
            ));
        }
        settings
    }

    /// Appends the key of one URI; for the line's own URI (`judged`),
    /// only when it is in scope. Returns the note bits of what the site
    /// rules did, or `None` when the URI is out of scope.
    fn write_key(
        &self,
        uri: &[u8],
        out: &mut Vec<u8>,
        judged: bool,
        scratch: &mut Scratch,
        site: &mut Vec<u8>,
    ) -> Result<Option<u32>, Rejection> {
        if !(judged && self.judges()) {
            let changes = self.key.write(&self.normalizer, uri, out, scratch)?;
            return Ok(Some(rule_notes(changes)));
        }
        // Scope and site go by the canonical form, whatever the key.
        let start = out.len();
        let changes = self.normalizer.normalize_into(uri, out, scratch)?;
        let judged = self.judge(&out[start..], site);
        if !matches!(judged, Ok(true)) {
            out.truncate(start);
            return judged.map(|_| None);
        }
        match self.key {
            KeyFormat::Canonical => {}
            KeyFormat::Surt => {
                out.truncate(start);
                normalize_surt_into(&self.normalizer, uri, out, scratch)?;
            }
            KeyFormat::Host | KeyFormat::Domain => {
                let site = self.key.site().expect("a site key");
                site.cut(out, start)?;
            }
        }
        Ok(Some(rule_notes(changes)))
    }
}
