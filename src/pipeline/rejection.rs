//! Why a line was set aside, and where in the line: what a [`LineMapper`]
//! refuses a line with and the stats count lines by. The URI's own faults
//! are the core's ([`InvalidUri`], [`RuleRefusal`], [`Unfetchable`]); the
//! line's (too long, a column missing, not an index record) and the
//! column the fault is in are the engine's, and only here.
//!
//! [`LineMapper`]: super::LineMapper

use std::borrow::Cow;
use std::fmt;

use crate::error::{InvalidUri, Repair};
use crate::normalize::NormalizeError;
use crate::normalize::site::RuleRefusal;
use crate::uri::Unfetchable;

/// What is wrong with a line, without the column it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// The text is not a URI reference (RFC 3986 Appendix A), or (at the
    /// scheme rung) its host or port cannot be what its scheme names.
    Invalid(InvalidUri),
    /// Where only URIs a crawler fetches are taken (a frontier), a URI it
    /// does not: relative, an `http` one without a host, or of another
    /// scheme.
    Unfetchable(Unfetchable),
    /// A host or domain key of a URI without a host (`mailto:`, `urn:`).
    NoHost,
    /// At the protocol rung: a site rule (`--rules`, `--rules-clearurls`)
    /// made the URI invalid, or gave one that normalizing again changes.
    Rule(RuleRefusal),
    /// The line is longer than the run's limit on line length (bytes).
    LineTooLong { limit: usize },
    /// The line (of `length` bytes) has fewer columns than `--field`,
    /// `--key-fields` or `--base-field` name.
    MissingField { length: usize },
    /// A line of a CDXJ index that is not a record (a SURT key, a
    /// timestamp, then a JSON object with a `url`).
    NotAnIndexRecord,
    /// A bug in urinorm stopped this line (reported, and counted, never lost).
    Internal,
}

impl Fault {
    /// The reason as a sentence fragment, the same for every line with
    /// this fault: what the stats count rejected lines by.
    pub fn reason(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Fault::Invalid(invalid) => invalid.kind().reason(),
            Fault::Unfetchable(Unfetchable::RelativeReference) => {
                "a relative reference, not a URI to fetch (it has no scheme; resolve it with --base)"
            }
            Fault::Unfetchable(Unfetchable::NotCrawled) => {
                "a URI of a scheme no crawler fetches (a frontier takes http, https, ftp, ftps, ws and wss; --keep-scheme names others to take)"
            }
            Fault::Unfetchable(unfetchable) => unfetchable.reason(),
            Fault::NoHost => "the URI has no host to key on",
            Fault::Rule(refusal) => return Cow::Owned(refusal.to_string()),
            Fault::LineTooLong { .. } => "line longer than the maximum line length",
            Fault::MissingField { .. } => "line has fewer fields than the options name",
            Fault::NotAnIndexRecord => {
                "not a CDXJ record (a SURT key, a timestamp, then a JSON object with a url)"
            }
            Fault::Internal => "internal error in urinorm (a bug: please report the line)",
        })
    }

    /// The byte the fault is at, when it is at one (not about the whole URI).
    pub fn offset(&self) -> Option<usize> {
        match *self {
            Fault::Invalid(invalid) => Some(invalid.offset()),
            Fault::LineTooLong { limit } => Some(limit),
            Fault::MissingField { length } => Some(length),
            _ => None,
        }
    }

    /// Whether the fault says the line is no URI at all (as a binary
    /// file's lines are), rather than a URI refused: relative, without a
    /// host, or by a site rule.
    pub fn is_malformed(&self) -> bool {
        !matches!(self, Fault::Unfetchable(_) | Fault::NoHost | Fault::Rule(_))
    }
}

/// The text a [`Rejection`]'s offset counts bytes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Within {
    /// The text that was read: a whole line, or a URI.
    #[default]
    Text,
    /// Column N (1-based) of a line: the URI's column.
    Field(u32),
    /// Column N (1-based) of a line, which holds the base URI.
    BaseField(u32),
    /// The URI a reference resolved to against its base (RFC 3986 §5.2),
    /// from column N when the reference is a column.
    Resolved(Option<u32>),
}

/// Why a line was rejected, and which of its texts the fault is in.
///
/// ```
/// use urinorm::UriRef;
/// use urinorm::pipeline::{Rejection, Within};
/// let invalid = UriRef::parse("http://a b/").unwrap_err();
/// let rejection = Rejection::from(invalid).within(Within::Field(2));
/// assert_eq!(rejection.to_string(), "field 2: space is not allowed in a URI at byte 8 of the field");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    fault: Fault,
    within: Within,
}

impl Rejection {
    pub const fn new(fault: Fault) -> Rejection {
        Rejection {
            fault,
            within: Within::Text,
        }
    }

    /// The same rejection, its fault found in `within`.
    pub fn within(self, within: Within) -> Rejection {
        Rejection { within, ..self }
    }

    /// The same rejection, its URI fault (if it is one) changed by `f`: moved
    /// to the user's byte, or told which repair would avoid it.
    pub fn map_invalid(self, f: impl FnOnce(InvalidUri) -> InvalidUri) -> Rejection {
        match self.fault {
            Fault::Invalid(invalid) => Rejection {
                fault: Fault::Invalid(f(invalid)),
                ..self
            },
            _ => self,
        }
    }

    pub fn fault(&self) -> &Fault {
        &self.fault
    }

    /// The reason, without where: [`Fault::reason`].
    pub fn reason(&self) -> Cow<'static, str> {
        self.fault.reason()
    }

    /// The byte the fault is at, counted in [`Rejection::counted_in`].
    pub fn offset(&self) -> Option<usize> {
        self.fault.offset()
    }

    /// What text the offset counts in.
    pub const fn counted_in(&self) -> Within {
        self.within
    }

    /// The lenient repair that would avoid this rejection, if one would.
    pub fn repair(&self) -> Option<Repair> {
        match &self.fault {
            Fault::Invalid(invalid) => invalid.repair(),
            _ => None,
        }
    }
}

impl From<Fault> for Rejection {
    fn from(fault: Fault) -> Self {
        Rejection::new(fault)
    }
}

impl From<InvalidUri> for Rejection {
    fn from(invalid: InvalidUri) -> Self {
        Rejection::new(Fault::Invalid(invalid))
    }
}

impl From<NormalizeError> for Rejection {
    fn from(error: NormalizeError) -> Self {
        Rejection::new(match error {
            NormalizeError::Invalid(invalid) => Fault::Invalid(invalid),
            NormalizeError::Rule(refusal) => Fault::Rule(refusal),
        })
    }
}

impl From<Unfetchable> for Rejection {
    fn from(unfetchable: Unfetchable) -> Self {
        Rejection::new(Fault::Unfetchable(unfetchable))
    }
}

/// The column, the reason and where: "field 2: invalid percent-encoding at
/// byte 10 of the field"; a reason about the whole URI has no byte ("the
/// URI has no host to key on"). The repair that would avoid it is left to
/// the caller to word ([`Rejection::repair`]): the command line names its
/// flag, the library has none.
impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (column, of) = match self.within {
            Within::Text => (None, ""),
            Within::Field(n) => (Some(("field", n)), " of the field"),
            Within::BaseField(n) => (Some(("base field", n)), " of the field"),
            Within::Resolved(None) => (None, " of the resolved URI"),
            Within::Resolved(Some(n)) => (Some(("field", n)), " of the URI it resolves to"),
        };
        if let Some((name, n)) = column {
            write!(f, "{name} {n}: ")?;
        }
        f.write_str(&self.reason())?;
        match self.offset() {
            Some(offset) => write!(f, " at byte {offset}{of}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Rejection {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::normalize::site::RuleFault;

    #[test]
    fn a_fault_about_the_whole_uri_names_no_byte() {
        let rejection = Rejection::new(Fault::NoHost).within(Within::Field(3));
        assert_eq!(
            rejection.to_string(),
            "field 3: the URI has no host to key on"
        );
        let rule = RuleRefusal::new("x.rules:1 drop-params", RuleFault::NotAFixedPoint);
        assert_eq!(
            Rejection::new(Fault::Rule(rule)).to_string(),
            "rule x.rules:1 drop-params gives a URI that normalizing again changes"
        );
    }

    #[test]
    fn a_line_fault_is_at_a_byte_of_the_line() {
        let too_long = Rejection::new(Fault::LineTooLong { limit: 8 });
        assert_eq!(
            too_long.to_string(),
            "line longer than the maximum line length at byte 8"
        );
        let resolved = Rejection::from(InvalidUri::new(4, ErrorKind::Space));
        assert_eq!(
            resolved.within(Within::Resolved(None)).to_string(),
            "space is not allowed in a URI at byte 4 of the resolved URI"
        );
    }

    #[test]
    fn only_a_uri_fault_is_moved_or_told_its_repair() {
        let moved = Rejection::from(InvalidUri::new(4, ErrorKind::Space)).map_invalid(|e| e.at(9));
        assert_eq!(moved.offset(), Some(9));
        let no_host = Rejection::new(Fault::NoHost).map_invalid(|e| e.at(9));
        assert_eq!(no_host.offset(), None);
        assert!(
            Rejection::new(Fault::NotAnIndexRecord)
                .fault()
                .is_malformed()
        );
        assert!(!Rejection::new(Fault::NoHost).fault().is_malformed());
    }
}
