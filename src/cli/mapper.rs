//! The line mapper every normalizing command uses: which column holds the
//! URI, what it is resolved against, whether it is repaired first, and
//! whether its key is the canonical form or a SURT.

use std::cell::RefCell;
use std::ops::Range;

use urinorm::error::ErrorKind;
use urinorm::lenient::{self, Repair};
use urinorm::normalize::Normalizer;
use urinorm::pipeline::{LineMapper, Mapped};
use urinorm::resolve::{SchemeRule, resolve_into};
use urinorm::surt::normalize_surt_into;
use urinorm::{InvalidUri, UriRef};

/// What a line's key is: its canonical form, or that form as a SURT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum KeyFormat {
    #[default]
    Canonical,
    /// `com,example,www)/path?query`, for web archive (CDX) tooling.
    Surt,
}

/// Where the URI is in a line, and what is done to it before normalizing.
#[derive(Clone, Debug, Default)]
pub struct Columns {
    /// The 0-based column holding the URI; `None`: the whole line.
    pub field: Option<usize>,
    pub delimiter: u8,
    /// 0-based columns whose normalized values, joined, are the dedup key.
    pub key_fields: Vec<usize>,
    /// The 0-based column holding the base URI to resolve against.
    pub base_field: Option<usize>,
    /// One base URI for every line.
    pub base: Option<String>,
    /// Apply the lenient repairs first.
    pub lenient: bool,
}

/// A [`Normalizer`] as the engine's line mapper.
pub struct NormalizeLines {
    pub normalizer: Normalizer,
    pub key: KeyFormat,
    pub columns: Columns,
}

/// The names of the note bits: the lenient repairs.
const REPAIR_NAMES: [&str; 5] = [
    Repair::ALL[0].name(),
    Repair::ALL[1].name(),
    Repair::ALL[2].name(),
    Repair::ALL[3].name(),
    Repair::ALL[4].name(),
];

thread_local! {
    /// Reused buffers, so that no line allocates: a repaired value, a
    /// resolved reference, and the column boundaries of the line.
    static REPAIRED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static RESOLVED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static COLUMNS: RefCell<Vec<Range<usize>>> = const { RefCell::new(Vec::new()) };
}

impl LineMapper for NormalizeLines {
    fn map_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<Mapped, InvalidUri> {
        let plain =
            self.columns.field.is_none() && self.columns.base.is_none() && !self.columns.lenient;
        if plain && self.key == KeyFormat::Canonical {
            // The hot path: no copy at all when the line is already canonical.
            let start = out.len();
            let changed = self
                .normalizer
                .normalize_if_changed(line, out)
                .map_err(|e| lenient::explain_rejection(line, e))?;
            return Ok(match changed {
                true => Mapped::key(start..out.len()),
                false => Mapped::unchanged(),
            });
        }
        let Some(field) = self.columns.field else {
            let start = out.len();
            let notes = self.uri_key(line, self.fixed_base(), out)?;
            return Ok(Mapped {
                notes,
                ..Mapped::key(start..out.len())
            });
        };
        COLUMNS.with_borrow_mut(|columns| {
            columns.clear();
            let mut from = 0;
            for end in memchr::memchr_iter(self.columns.delimiter, line).chain([line.len()]) {
                columns.push(from..end);
                from = end + 1;
            }
            let column = |n: usize| {
                columns
                    .get(n)
                    .map(|r| &line[r.clone()])
                    .ok_or(InvalidUri::new(line.len(), ErrorKind::MissingField))
            };
            let base = match self.columns.base_field {
                Some(m) => Some(column(m)?),
                None => self.fixed_base(),
            };
            let start = out.len();
            let value = column(field)?;
            // The line, with the URI's column replaced by its key.
            out.extend_from_slice(&line[..columns[field].start]);
            let key_start = out.len();
            let notes = self
                .uri_key(value, base, out)
                .inspect_err(|_| out.truncate(start))?;
            let key_range = key_start..out.len();
            out.extend_from_slice(&line[columns[field].end..]);
            let output = start..out.len();
            if self.columns.key_fields.is_empty() {
                return Ok(Mapped {
                    key: Some(key_range),
                    output: Some(output),
                    notes,
                });
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
                    let value = column(k).inspect_err(|_| out.truncate(start))?;
                    self.uri_key(value, None, out)
                        .inspect_err(|_| out.truncate(start))?;
                }
            }
            Ok(Mapped {
                key: Some(key_start..out.len()),
                output: Some(output),
                notes,
            })
        })
    }

    fn note_names(&self) -> &[&'static str] {
        &REPAIR_NAMES
    }
}

impl NormalizeLines {
    fn fixed_base(&self) -> Option<&[u8]> {
        self.columns.base.as_deref().map(str::as_bytes)
    }

    /// Appends the key of one URI value: repaired if lenient, resolved
    /// against `base` if any, normalized, as a SURT if asked. Returns the
    /// repairs made; on error `out` is as it was.
    fn uri_key(
        &self,
        value: &[u8],
        base: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) -> Result<u32, InvalidUri> {
        REPAIRED.with_borrow_mut(|repaired| {
            repaired.clear();
            let notes = if self.columns.lenient {
                lenient::repair(value, repaired)
            } else {
                0
            };
            let value = if notes == 0 { value } else { &repaired[..] };
            let strict_reason = |e: InvalidUri| {
                if self.columns.lenient {
                    e
                } else {
                    lenient::explain_rejection(value, e)
                }
            };
            RESOLVED.with_borrow_mut(|resolved| {
                let value = match base {
                    None => value,
                    Some(base) => {
                        // A base that is not a URI rejects the line, with its reason.
                        let base = UriRef::parse_bytes(base)?;
                        let reference = UriRef::parse_bytes(value).map_err(strict_reason)?;
                        resolved.clear();
                        resolve_into(&base, &reference, SchemeRule::Strict, resolved)?;
                        &resolved[..]
                    }
                };
                match self.key {
                    KeyFormat::Canonical => {
                        self.normalizer
                            .normalize_into(value, out)
                            .map_err(strict_reason)?;
                    }
                    KeyFormat::Surt => {
                        normalize_surt_into(&self.normalizer, value, out).map_err(strict_reason)?;
                    }
                }
                Ok(notes)
            })
        })
    }
}
