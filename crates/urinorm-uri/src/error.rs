//! Why a byte string is not a URI reference: an offset and a reason a person can read.
//!
//! It knows no grammar: the parser and the rungs decide, this only says.

use std::fmt;

/// The component of a URI reference a byte was found in (RFC 3986 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    Scheme,
    Userinfo,
    Host,
    Port,
    Path,
    Query,
    Fragment,
}

impl Component {
    /// The component's name as the RFC writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Component::Scheme => "scheme",
            Component::Userinfo => "userinfo",
            Component::Host => "host",
            Component::Port => "port",
            Component::Path => "path",
            Component::Query => "query",
            Component::Fragment => "fragment",
        }
    }
}

/// What is wrong, without where: the key rejected URIs are counted by.
/// Only faults of the text as a URI reference are here: what a program
/// built on the core refuses for its own reasons (a line too long, a
/// missing column) is that program's to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `%` not followed by two hex digits (§2.1).
    InvalidPercentEncoding,
    /// A space, which no URI contains (§2, Appendix C).
    Space,
    /// A control character (C0 or DEL), which no URI contains (§2).
    ControlCharacter,
    /// A byte outside ASCII: URIs are ASCII; IRIs must be percent-encoded first (§2).
    NonAscii,
    /// An ASCII character the grammar does not allow in that component.
    DisallowedCharacter(Component),
    /// `[` or `]` anywhere but around an IP literal host (§3.2.2).
    BracketOutsideIpLiteral,
    /// A `[` host without its `]`.
    UnclosedIpLiteral,
    /// Something after `]` other than `:port`.
    JunkAfterIpLiteral,
    /// The text inside `[...]` is not an IPv6address (§3.2.2).
    InvalidIpv6,
    /// The text inside `[v...]` is not an IPvFuture (§3.2.2).
    InvalidIpvFuture,
    /// The port has a byte other than a digit (§3.2.3).
    PortNotANumber,
    /// A relative reference whose first segment has a `:` would read as a scheme (§4.2).
    ColonInFirstSegment,
    /// A second `#`: the fragment cannot contain one (§3.5).
    SecondHash,
    /// The base of a resolution has no scheme (§5.1: it must be absolute).
    RelativeBase,
    /// At the scheme rung: the host of a scheme that names Internet hosts is
    /// not a domain name UTS #46 can map to ASCII.
    InvalidInternationalDomainName,
    /// At the scheme rung: a port beyond 65535 for a scheme whose ports are
    /// TCP or UDP ports.
    PortOutOfRange,
    /// The reference is longer than `u32::MAX` bytes (4 GiB): a
    /// [`UriRef`](crate::UriRef) keeps its positions in 32 bits.
    ReferenceTooLong,
}

impl ErrorKind {
    /// The reason as a sentence fragment, the same for every line with this fault.
    pub const fn reason(self) -> &'static str {
        match self {
            ErrorKind::InvalidPercentEncoding => "invalid percent-encoding",
            ErrorKind::Space => "space is not allowed in a URI",
            ErrorKind::ControlCharacter => "control character is not allowed in a URI",
            ErrorKind::NonAscii => "non-ASCII byte is not allowed in a URI",
            ErrorKind::DisallowedCharacter(c) => match c {
                Component::Scheme => "character not allowed in the scheme",
                Component::Userinfo => "character not allowed in the userinfo",
                Component::Host => "character not allowed in the host",
                Component::Port => "character not allowed in the port",
                Component::Path => "character not allowed in the path",
                Component::Query => "character not allowed in the query",
                Component::Fragment => "character not allowed in the fragment",
            },
            ErrorKind::BracketOutsideIpLiteral => "'[' or ']' outside an IP literal",
            ErrorKind::UnclosedIpLiteral => "IP literal without its closing ']'",
            ErrorKind::JunkAfterIpLiteral => "only ':port' may follow an IP literal",
            ErrorKind::InvalidIpv6 => "invalid IPv6 address",
            ErrorKind::InvalidIpvFuture => "invalid IPvFuture literal",
            ErrorKind::PortNotANumber => "port is not a number",
            ErrorKind::ColonInFirstSegment => {
                "':' in the first segment of a relative path (it would read as a scheme)"
            }
            ErrorKind::SecondHash => "second '#' (the fragment cannot contain one)",
            ErrorKind::RelativeBase => "base URI has no scheme",
            ErrorKind::InvalidInternationalDomainName => {
                "host is not a valid internationalized domain name (UTS #46)"
            }
            ErrorKind::PortOutOfRange => "port is out of range (0 to 65535)",
            ErrorKind::ReferenceTooLong => {
                "URI reference longer than 4 GiB (u32::MAX bytes), the most urinorm parses"
            }
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Why a text is not a URI reference: it does not match the grammar of RFC 3986
/// Appendix A, or (at the scheme rung) its host or port cannot be what its
/// scheme names.
///
/// ```
/// let err = urinorm_uri::UriRef::parse("http://a/b%zz").unwrap_err();
/// assert_eq!(err.offset(), 10);
/// assert_eq!(err.to_string(), "invalid percent-encoding at byte 10");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidUri {
    offset: usize,
    kind: ErrorKind,
    /// The lenient repair that would make the text a URI reference, if one would.
    repair: Option<Repair>,
}

impl InvalidUri {
    /// An error at `offset` (0-based) of the given kind.
    pub const fn new(offset: usize, kind: ErrorKind) -> Self {
        InvalidUri {
            offset,
            kind,
            repair: None,
        }
    }

    /// The same error at `offset`: where a caller counts the bytes in a
    /// larger text (a column of a line), or in the text before a repair.
    ///
    /// ```
    /// use urinorm_uri::error::{ErrorKind, InvalidUri};
    /// let e = InvalidUri::new(3, ErrorKind::Space).at(7);
    /// assert_eq!(e.to_string(), "space is not allowed in a URI at byte 7");
    /// ```
    pub const fn at(self, offset: usize) -> Self {
        InvalidUri { offset, ..self }
    }

    /// The same error, noting the lenient repair that would avoid it.
    pub const fn with_repair(self, repair: Repair) -> Self {
        InvalidUri {
            repair: Some(repair),
            ..self
        }
    }

    /// The lenient repair that would avoid this error, if one would.
    pub const fn repair(&self) -> Option<Repair> {
        self.repair
    }

    /// The 0-based byte offset where the input stops matching the grammar.
    pub const fn offset(&self) -> usize {
        self.offset
    }

    /// What is wrong.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }
}

/// The reason and where: "invalid percent-encoding at byte 10". The
/// repair that would avoid it is left to the caller to word
/// ([`InvalidUri::repair`]): the command line names its flag, the library
/// has none.
impl fmt::Display for InvalidUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.offset)
    }
}

impl std::error::Error for InvalidUri {}

/// One of the lenient repairs ([`crate::lenient`]): what browsers and
/// crawlers do to text that is almost a URI. It lives here because a
/// rejection can name the repair that would have avoided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repair {
    /// Whitespace around the URI removed (Appendix C).
    TrimWhitespace,
    /// `<…>`, `"…"`, `'…'` or a leading `URL:` removed (Appendix C).
    Unwrap,
    /// Tabs and line breaks inside a URI, and spaces too inside a
    /// `<…>`-wrapped one, removed (Appendix C).
    EmbeddedWhitespace,
    /// Spaces, non-ASCII bytes (as UTF-8) and characters not allowed where
    /// they stand percent-encoded.
    PercentEncode,
    /// A `%` not followed by two hex digits written as `%25`.
    LonePercent,
}

impl Repair {
    /// Every repair, in the order they apply.
    pub const ALL: [Repair; 5] = [
        Repair::TrimWhitespace,
        Repair::Unwrap,
        Repair::EmbeddedWhitespace,
        Repair::PercentEncode,
        Repair::LonePercent,
    ];

    /// The repair's name in stats and messages.
    pub const fn name(self) -> &'static str {
        match self {
            Repair::TrimWhitespace => "trim-whitespace",
            Repair::Unwrap => "unwrap",
            Repair::EmbeddedWhitespace => "embedded-whitespace",
            Repair::PercentEncode => "percent-encode",
            Repair::LonePercent => "lone-percent",
        }
    }

    /// What the repair does, for a message: "--lenient would …".
    pub const fn hint(self) -> &'static str {
        match self {
            Repair::TrimWhitespace => "trim the surrounding whitespace",
            Repair::Unwrap => "unwrap it from <>, quotes or URL:",
            Repair::EmbeddedWhitespace => {
                "remove the tab or line break (or the whitespace inside <...>)"
            }
            Repair::PercentEncode => "percent-encode it",
            Repair::LonePercent => "write the '%' as %25",
        }
    }

    /// The bit of this repair in a set.
    pub const fn bit(self) -> u32 {
        1 << self as u32
    }
}
