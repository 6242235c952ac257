//! The comparison ladder of RFC 3986 §6.2: a [`Rung`] and a [`Normalizer`]
//! that writes the canonical form of one reference into a reused buffer.
//!
//! Rungs are cumulative: each applies every rule of the rungs below it. The
//! syntax and scheme rungs copy the reference once and fix its bytes in
//! place (`rewrite.rs`); the protocol rung's transforms and site rules start
//! from that form. It knows nothing of files or threads.

mod ia;
pub mod protocol;
mod rewrite;
pub mod scheme;
pub mod site;
pub mod syntax;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::InvalidUri;
use crate::offsets::{HostTag, Offsets};
use crate::scratch::Slot;
use crate::swar;
use crate::uri::UriRef;
use protocol::{Protocol, ProtocolOptions, Transform};
use site::{Events, RuleFault, RuleId, RuleRefusal, SiteRewrite};

/// How far up the ladder of §6.2 to go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rung {
    /// §6.2.1: the reference as written (validated, not changed).
    String,
    /// §6.2.2: case, percent-encoding and dot-segment normalization.
    Syntax,
    /// §6.2.3: the rules of the scheme's own specification.
    Scheme,
    /// §6.2.4: named crawler transforms (see [`protocol`]), opt-in.
    Protocol,
}

impl Rung {
    /// Every rung, lowest first.
    pub const ALL: [Rung; 4] = [Rung::String, Rung::Syntax, Rung::Scheme, Rung::Protocol];

    /// The rung's name on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Rung::String => "string",
            Rung::Syntax => "syntax",
            Rung::Scheme => "scheme",
            Rung::Protocol => "protocol",
        }
    }

    /// The section of RFC 3986 that defines it.
    pub const fn section(self) -> &'static str {
        match self {
            Rung::String => "§6.2.1",
            Rung::Syntax => "§6.2.2",
            Rung::Scheme => "§6.2.3",
            Rung::Protocol => "§6.2.4",
        }
    }
}

impl Rung {
    /// The rung a request means: `named` when given, else the default, which
    /// is scheme, or protocol when `protocol_options` (a preset, transforms,
    /// a tracking list) are given. Protocol options under a lower named rung
    /// are an error: they would be silently ignored.
    ///
    /// ```
    /// use urinorm_uri::normalize::Rung;
    /// assert_eq!(Rung::requested(None, false), Ok(Rung::Scheme));
    /// assert_eq!(Rung::requested(None, true), Ok(Rung::Protocol));
    /// assert_eq!(Rung::requested(Some(Rung::Syntax), false), Ok(Rung::Syntax));
    /// let err = Rung::requested(Some(Rung::Syntax), true).unwrap_err();
    /// assert_eq!(err.rung, Rung::Syntax);
    /// ```
    pub fn requested(
        named: Option<Rung>,
        protocol_options: bool,
    ) -> Result<Rung, NeedsProtocolRung> {
        match named {
            Some(rung) if protocol_options && rung != Rung::Protocol => {
                Err(NeedsProtocolRung { rung })
            }
            Some(rung) => Ok(rung),
            None if protocol_options => Ok(Rung::Protocol),
            None => Ok(Rung::Scheme),
        }
    }
}

/// Protocol-rung options were given with a lower rung.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeedsProtocolRung {
    /// The rung that was named instead.
    pub rung: Rung,
}

impl fmt::Display for NeedsProtocolRung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a preset, added or removed transforms and a tracking list need the protocol rung, not the {} rung",
            self.rung
        )
    }
}

impl std::error::Error for NeedsProtocolRung {}

impl fmt::Display for Rung {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rung {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rung::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!("unknown rung '{s}' (choose string, syntax, scheme or protocol)")
            })
    }
}

/// One rule of the ladder: what [`Normalizer::normalize_into`] reports it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    LowercaseScheme,
    LowercaseHost,
    UppercasePercentHex,
    DecodeUnreserved,
    RemoveDotSegments,
    KeepPathFromReadingAsAuthority,
    DropEmptyPort,
    Ipv6Text,
    LowercaseIpvFuture,
    DropDefaultPort,
    PortLeadingZeros,
    EmptyPathIsRoot,
    HostToAscii,
    FileLocalhost,
    MailtoDomain,
    UrnNamespace,
}

impl Rule {
    /// Every rule, in the order they apply.
    pub const ALL: [Rule; 16] = [
        Rule::LowercaseScheme,
        Rule::LowercaseHost,
        Rule::UppercasePercentHex,
        Rule::DecodeUnreserved,
        Rule::RemoveDotSegments,
        Rule::KeepPathFromReadingAsAuthority,
        Rule::DropEmptyPort,
        Rule::Ipv6Text,
        Rule::LowercaseIpvFuture,
        Rule::DropDefaultPort,
        Rule::PortLeadingZeros,
        Rule::EmptyPathIsRoot,
        Rule::HostToAscii,
        Rule::FileLocalhost,
        Rule::MailtoDomain,
        Rule::UrnNamespace,
    ];

    /// The rung the rule belongs to.
    pub const fn rung(self) -> Rung {
        match self {
            Rule::DropDefaultPort
            | Rule::PortLeadingZeros
            | Rule::EmptyPathIsRoot
            | Rule::HostToAscii
            | Rule::FileLocalhost
            | Rule::MailtoDomain
            | Rule::UrnNamespace => Rung::Scheme,
            _ => Rung::Syntax,
        }
    }

    /// What the rule does, in words, with its source.
    pub const fn description(self) -> &'static str {
        match self {
            Rule::LowercaseScheme => "lower-cased the scheme (§3.1, §6.2.2.1)",
            Rule::LowercaseHost => "lower-cased the host (§3.2.2, §6.2.2.1)",
            Rule::UppercasePercentHex => {
                "upper-cased the hex digits of percent-encodings (§6.2.2.1)"
            }
            Rule::DecodeUnreserved => "decoded percent-encoded unreserved characters (§6.2.2.2)",
            Rule::RemoveDotSegments => "removed dot segments from the path (§5.2.4, §6.2.2.3)",
            Rule::KeepPathFromReadingAsAuthority => {
                "wrote the path as '/.//…' so it cannot read as an authority (§3.3)"
            }
            Rule::DropEmptyPort => "dropped the ':' of an empty port (§3.2.3)",
            Rule::Ipv6Text => "wrote the IPv6 address in RFC 5952 text",
            Rule::LowercaseIpvFuture => "lower-cased the IPvFuture literal",
            Rule::DropDefaultPort => "dropped the scheme's default port (§6.2.3)",
            Rule::PortLeadingZeros => {
                "dropped leading zeros of the port (§3.2.3: a decimal number)"
            }
            Rule::EmptyPathIsRoot => "wrote the empty path as '/' (§6.2.3)",
            Rule::HostToAscii => "mapped the host name to ASCII with UTS #46 (§3.2.2, IDNA)",
            Rule::FileLocalhost => "dropped the host 'localhost' of a file URI (RFC 8089 §2)",
            Rule::MailtoDomain => "lower-cased the mail domains (RFC 6068 §2)",
            Rule::UrnNamespace => "lower-cased the URN namespace identifier (RFC 8141 §3.1)",
        }
    }
}

/// The rules and protocol transforms that changed a reference, and what
/// its site rules did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    rules: u32,
    transforms: u32,
    site: Events,
}

impl Changes {
    pub(crate) fn add(&mut self, rule: Rule) {
        self.rules |= 1 << rule as u32;
    }

    /// Whether `rule` changed something.
    pub fn contains(self, rule: Rule) -> bool {
        self.rules & (1 << rule as u32) != 0
    }

    /// Whether nothing changed.
    pub fn is_empty(self) -> bool {
        self.rules == 0 && self.transforms == 0 && !self.site.contains(Events::CHANGED)
    }

    /// What the site rules did (see [`site`]).
    pub fn site_events(self) -> Events {
        self.site
    }

    /// The rules that changed something, in the order they apply.
    pub fn rules(self) -> impl Iterator<Item = Rule> {
        Rule::ALL.into_iter().filter(move |&r| self.contains(r))
    }

    /// The protocol transforms that changed something, in the order they apply.
    pub fn transforms(self) -> impl Iterator<Item = Transform> {
        Transform::ALL
            .into_iter()
            .filter(move |&t| self.transforms & (1 << t as u32) != 0)
    }
}

/// Writes canonical forms at one rung.
///
/// ```
/// use urinorm_uri::normalize::protocol::Protocol;
/// use urinorm_uri::normalize::{Normalizer, Rung, Scratch};
///
/// let syntax = Normalizer::new(Rung::Syntax);
/// assert_eq!(syntax.normalize("eXAMPLE://a/./b/../b/%63/%7bfoo%7d")?, "example://a/b/c/%7Bfoo%7D");
///
/// let scheme = Normalizer::new(Rung::Scheme);
/// assert_eq!(scheme.normalize("HTTP://www.Example.com:80")?, "http://www.example.com/");
///
/// // Reuse one buffer and one scratch for many references: nothing else
/// // is allocated.
/// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
/// for line in ["http://a/%7e", "http://a/~"] {
///     out.clear();
///     scheme.normalize_into(line.as_bytes(), &mut out, &mut scratch)?;
///     assert_eq!(out, b"http://a/~");
/// }
///
/// // The protocol rung, with the `safe` preset.
/// let safe = Normalizer::with_protocol(Protocol::default());
/// assert_eq!(safe.normalize("http://a/?utm_source=x&id=1#top")?, "http://a/?id=1");
/// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Normalizer {
    rung: Rung,
    /// The transforms of the protocol rung (unused below it).
    protocol: Protocol,
    /// The site rules the protocol rung applies after its transforms.
    rules: Option<Arc<dyn SiteRewrite>>,
}

/// Why a [`Normalizer`] gave no canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NormalizeError {
    /// The text is not a URI reference, or (at the scheme rung) its host
    /// or port cannot be what its scheme names.
    Invalid(InvalidUri),
    /// At the protocol rung: a site rule made the URI invalid, or gave one
    /// that normalizing again changes.
    Rule(RuleRefusal),
}

impl NormalizeError {
    /// The text's own fault, when it is one (not a site rule's).
    ///
    /// ```
    /// use urinorm_uri::ErrorKind;
    /// use urinorm_uri::normalize::{Normalizer, Rung};
    /// let err = Normalizer::new(Rung::Scheme).normalize("http://a:65536/").unwrap_err();
    /// assert_eq!(err.invalid().map(|e| (e.kind(), e.offset())), Some((ErrorKind::PortOutOfRange, 9)));
    /// ```
    pub fn invalid(&self) -> Option<InvalidUri> {
        match self {
            NormalizeError::Invalid(invalid) => Some(*invalid),
            NormalizeError::Rule(_) => None,
        }
    }
}

impl From<InvalidUri> for NormalizeError {
    fn from(invalid: InvalidUri) -> Self {
        NormalizeError::Invalid(invalid)
    }
}

impl fmt::Display for NormalizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NormalizeError::Invalid(invalid) => invalid.fmt(f),
            NormalizeError::Rule(refusal) => refusal.fmt(f),
        }
    }
}

impl std::error::Error for NormalizeError {}

/// The buffers a [`Normalizer`] reuses from one reference to the next, so
/// that normalizing allocates nothing per URI. A thread makes one and
/// lends it to every call; the syntax and scheme rungs need none of it.
#[derive(Debug, Default)]
pub struct Scratch {
    /// A site rule's result normalized again, to check it is a fixed point.
    again: Vec<u8>,
    rewrite: Rewrite,
    /// The canonical form a SURT key is made from ([`crate::surt`]).
    pub(crate) canonical: Vec<u8>,
}

/// The protocol rung's buffers.
#[derive(Debug, Default)]
struct Rewrite {
    /// The scheme rung's form of the reference being rewritten.
    scheme_form: Vec<u8>,
    transforms: protocol::Scratch,
    /// The site rules' own.
    site: Slot,
}

impl Normalizer {
    /// A normalizer for `rung`; the protocol rung gets the `safe` preset.
    pub fn new(rung: Rung) -> Normalizer {
        Normalizer {
            rung,
            protocol: Protocol::default(),
            rules: None,
        }
    }

    /// A normalizer for the protocol rung with these transforms.
    pub fn with_protocol(protocol: Protocol) -> Normalizer {
        Normalizer {
            rung: Rung::Protocol,
            protocol,
            rules: None,
        }
    }

    /// The same normalizer at the protocol rung, applying `rules` after its
    /// transforms.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use urinorm_uri::normalize::site::{Events, RuleId, SiteRewrite};
    /// use urinorm_uri::normalize::{Normalizer, Rung};
    /// use urinorm_uri::scratch::Slot;
    ///
    /// /// One rule: the first `/amp` of a URI goes.
    /// #[derive(Debug)]
    /// struct NoAmp;
    ///
    /// impl SiteRewrite for NoAmp {
    ///     fn apply(&self, out: &mut Vec<u8>, start: usize, _: &mut Slot, fired: &mut dyn FnMut(RuleId)) -> Events {
    ///         let Some(at) = out[start..].windows(5).position(|w| w == b"/amp/") else {
    ///             return Events::default();
    ///         };
    ///         out.drain(start + at..start + at + 4);
    ///         fired(RuleId::new(0));
    ///         Events::CHANGED
    ///     }
    ///     fn label(&self, _: RuleId) -> &str { "no-amp" }
    ///     fn describe(&self) -> &str { "no-amp" }
    /// }
    ///
    /// let normalizer = Normalizer::new(Rung::Protocol).with_rules(Arc::new(NoAmp));
    /// assert_eq!(normalizer.normalize("http://News.Example/amp/a/b")?, "http://news.example/a/b");
    /// // A result that normalizing again would change is rejected, naming the rule.
    /// let err = normalizer.normalize("http://news.example/amp/amp/a").unwrap_err();
    /// assert_eq!(err.to_string(), "rule no-amp gives a URI that normalizing again changes");
    /// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
    /// ```
    pub fn with_rules(self, rules: Arc<dyn SiteRewrite>) -> Normalizer {
        Normalizer {
            rung: Rung::Protocol,
            rules: Some(rules),
            ..self
        }
    }

    /// The site rules, when the protocol rung has some.
    pub fn rules(&self) -> Option<&dyn SiteRewrite> {
        self.rules
            .as_deref()
            .filter(|_| self.rung == Rung::Protocol)
    }

    /// The normalizer a request describes: a rung (or the default of
    /// [`Rung::requested`]) and the protocol rung's options. The command
    /// line and the Python package build theirs here.
    ///
    /// ```
    /// use urinorm_uri::normalize::protocol::{ProtocolOptions, Transform};
    /// use urinorm_uri::normalize::{Normalizer, Rung};
    ///
    /// let scheme = Normalizer::from_options(None, &ProtocolOptions::default())?;
    /// assert_eq!(scheme.rung(), Rung::Scheme);
    ///
    /// let with = ProtocolOptions { with: &[Transform::StripWww], ..Default::default() };
    /// let protocol = Normalizer::from_options(None, &with)?;
    /// assert_eq!(protocol.normalize("http://www.example.com/#top")?, "http://example.com/");
    ///
    /// let err = Normalizer::from_options(Some(Rung::Syntax), &with).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "a preset, added or removed transforms and a tracking list need the protocol rung, not the syntax rung"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_options(
        rung: Option<Rung>,
        options: &ProtocolOptions<'_>,
    ) -> Result<Normalizer, NeedsProtocolRung> {
        Ok(match Rung::requested(rung, !options.is_empty())? {
            Rung::Protocol => {
                let normalizer = Normalizer::with_protocol(options.protocol());
                match options.rules {
                    Some(rules) => normalizer.with_rules(rules.clone()),
                    None => normalizer,
                }
            }
            rung => Normalizer::new(rung),
        })
    }

    /// The rung it normalizes to.
    pub const fn rung(&self) -> Rung {
        self.rung
    }

    /// The protocol rung's transforms, when that is the rung.
    pub fn protocol(&self) -> Option<&Protocol> {
        (self.rung == Rung::Protocol).then_some(&self.protocol)
    }

    /// Normalizes one reference and returns it (with buffers of its own:
    /// in a loop, [`Normalizer::normalize_into`] allocates nothing).
    pub fn normalize(&self, input: &str) -> Result<String, NormalizeError> {
        let mut out = Vec::with_capacity(input.len() + 1);
        self.normalize_into(input.as_bytes(), &mut out, &mut Scratch::default())?;
        // Every rung writes ASCII: the parser admits nothing else, and the
        // host mapping's output is ASCII by definition.
        Ok(String::from_utf8(out).expect("canonical forms are ASCII"))
    }

    /// Appends the canonical form of `input` to `out` and says which rules
    /// changed it. On error `out` is left as it was.
    pub fn normalize_into(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<Changes, NormalizeError> {
        self.normalize_parsed(&UriRef::parse_bytes(input)?, out, scratch)
    }

    /// [`Normalizer::normalize_into`] for a reference already parsed, so
    /// that callers working one line at several rungs parse it once.
    ///
    /// ```
    /// use urinorm_uri::UriRef;
    /// use urinorm_uri::normalize::{Normalizer, Rung, Scratch};
    /// let uri = UriRef::parse("HTTP://a/./b")?;
    /// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
    /// for rung in [Rung::Syntax, Rung::Scheme] {
    ///     out.clear();
    ///     Normalizer::new(rung).normalize_parsed(&uri, &mut out, &mut scratch)?;
    ///     assert_eq!(out, b"http://a/b");
    /// }
    /// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
    /// ```
    pub fn normalize_parsed(
        &self,
        uri: &UriRef<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<Changes, NormalizeError> {
        if self.leaves_alone(uri) {
            out.extend_from_slice(uri.as_str().as_bytes());
            return Ok(Changes::default());
        }
        self.write_traced(uri, out, None, scratch)
    }

    /// Like [`Normalizer::normalize_into`], but appends only when the
    /// canonical form differs from `input`: returns `false`, with `out` as it
    /// was, when `input` is already canonical. Bulk callers use this to keep
    /// unchanged lines where they are instead of copying them.
    ///
    /// ```
    /// use urinorm_uri::normalize::{Normalizer, Rung, Scratch};
    /// let scheme = Normalizer::new(Rung::Scheme);
    /// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
    /// assert!(!scheme.normalize_if_changed(b"http://example.com/a", &mut out, &mut scratch)?);
    /// assert!(out.is_empty());
    /// assert!(scheme.normalize_if_changed(b"HTTP://example.com/a", &mut out, &mut scratch)?);
    /// assert_eq!(out, b"http://example.com/a");
    /// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
    /// ```
    pub fn normalize_if_changed(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<bool, NormalizeError> {
        self.rewrite_if_changed(input, out, scratch)
            .map(|(changed, _)| changed)
    }

    /// [`Normalizer::normalize_if_changed`], with the changes made.
    ///
    /// ```
    /// use urinorm_uri::normalize::{Normalizer, Rule, Rung, Scratch};
    /// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
    /// let scheme = Normalizer::new(Rung::Scheme);
    /// let (changed, changes) = scheme.rewrite_if_changed(b"http://a:80/", &mut out, &mut scratch)?;
    /// assert!(changed && changes.contains(Rule::DropDefaultPort));
    /// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
    /// ```
    pub fn rewrite_if_changed(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<(bool, Changes), NormalizeError> {
        let uri = UriRef::parse_bytes(input)?;
        if self.leaves_alone(&uri) {
            return Ok((false, Changes::default()));
        }
        let start = out.len();
        let changes = self.write_traced(&uri, out, None, scratch)?;
        // Compare the bytes, not the rules that fired: two rules can undo
        // each other (`o:/.//`: dot removal, then the `/.` guard).
        if out[start..] == *input {
            out.truncate(start);
            return Ok((false, changes));
        }
        Ok((true, changes))
    }

    /// [`Normalizer::normalize_into`], naming each site rule that changed
    /// the reference, in order (for `explain` and the ladder's examples).
    pub fn normalize_traced(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        fired: &mut Vec<RuleId>,
        scratch: &mut Scratch,
    ) -> Result<Changes, NormalizeError> {
        self.write_traced(&UriRef::parse_bytes(input)?, out, Some(fired), scratch)
    }

    /// Writes the canonical form, telling `trace` the site rules that
    /// changed it; on error leaves `out` as it was.
    fn write_traced(
        &self,
        uri: &UriRef<'_>,
        out: &mut Vec<u8>,
        trace: Option<&mut Vec<RuleId>>,
        scratch: &mut Scratch,
    ) -> Result<Changes, NormalizeError> {
        let start = out.len();
        let Scratch { again, rewrite, .. } = scratch;
        let written = match self.rung {
            Rung::Protocol => match self.write_protocol(uri, out, trace, rewrite) {
                Ok((changes, Some(rule))) => self
                    .check_fixed_point(rule, &out[start..], again, rewrite)
                    .map(|()| changes)
                    .map_err(NormalizeError::Rule),
                Ok((changes, None)) => Ok(changes),
                Err(invalid) => Err(NormalizeError::Invalid(invalid)),
            },
            // §6.2.1: the characters as written, once they parse.
            Rung::String => {
                out.extend_from_slice(uri.as_str().as_bytes());
                Ok(Changes::default())
            }
            Rung::Syntax | Rung::Scheme => self.write(uri, out).map_err(NormalizeError::Invalid),
        };
        if written.is_err() {
            out.truncate(start);
        }
        written
    }

    /// The scheme rung's form into a reused buffer, then the protocol
    /// transforms on its components, then the site rules; with the last
    /// site rule that changed it.
    fn write_protocol(
        &self,
        uri: &UriRef<'_>,
        out: &mut Vec<u8>,
        trace: Option<&mut Vec<RuleId>>,
        rewrite: &mut Rewrite,
    ) -> Result<(Changes, Option<RuleId>), InvalidUri> {
        let Rewrite {
            scheme_form,
            transforms,
            site,
        } = rewrite;
        scheme_form.clear();
        let (changes, layout) = self.write_laid_out(uri, scheme_form)?;
        let rewritten;
        let form = match changes.is_empty() {
            // No rule changed a byte: the form is `uri` itself, whose
            // parts are known without a scan of the copy.
            true => {
                debug_assert_eq!(scheme_form.as_slice(), uri.as_str().as_bytes());
                uri
            }
            false => {
                rewritten = laid_out(scheme_form, layout);
                &rewritten
            }
        };
        Ok(self.transform_scheme_form(form, out, changes, trace, transforms, site))
    }

    /// The protocol rung's form of a reference already in its scheme-rung
    /// form (`canonical`), checked as [`Normalizer::normalize_into`] checks
    /// it: the ladder's protocol steps start from the scheme rung's classes.
    ///
    /// ```
    /// use urinorm_uri::UriRef;
    /// use urinorm_uri::normalize::protocol::Protocol;
    /// use urinorm_uri::normalize::{Normalizer, Scratch};
    /// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
    /// let safe = Normalizer::with_protocol(Protocol::default());
    /// let canonical = UriRef::parse("http://a/?utm_source=x")?;
    /// safe.protocol_form(&canonical, &mut out, &mut scratch)?;
    /// assert_eq!(out, b"http://a/");
    /// # Ok::<(), urinorm_uri::normalize::NormalizeError>(())
    /// ```
    pub fn protocol_form(
        &self,
        canonical: &UriRef<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<Changes, NormalizeError> {
        let start = out.len();
        let Scratch { again, rewrite, .. } = scratch;
        let (changes, last_rule) = self.transform_scheme_form(
            canonical,
            out,
            Changes::default(),
            None,
            &mut rewrite.transforms,
            &mut rewrite.site,
        );
        match last_rule {
            Some(rule) => self
                .check_fixed_point(rule, &out[start..], again, rewrite)
                .map(|()| changes)
                .map_err(NormalizeError::Rule)
                .inspect_err(|_| out.truncate(start)),
            None => Ok(changes),
        }
    }

    /// The protocol transforms and the site rules on the scheme-rung form
    /// `canonical`, appended to `out`; with the last site rule that changed it.
    fn transform_scheme_form(
        &self,
        canonical: &UriRef<'_>,
        out: &mut Vec<u8>,
        mut changes: Changes,
        mut trace: Option<&mut Vec<RuleId>>,
        transforms: &mut protocol::Scratch,
        site: &mut Slot,
    ) -> (Changes, Option<RuleId>) {
        let start = out.len();
        changes.transforms = self.protocol.write(canonical, out, transforms);
        let Some(rules) = &self.rules else {
            return (changes, None);
        };
        let mut last = None;
        changes.site = rules.apply(out, start, site, &mut |rule| {
            last = Some(rule);
            if let Some(trace) = trace.as_deref_mut() {
                trace.push(rule);
            }
        });
        (changes, last)
    }

    /// A site rule's result must be a URI reference and a fixed point:
    /// normalizing it again, rules and all, gives it back. Otherwise the
    /// line is rejected, naming `rule`, the last rule that changed it: a
    /// rule never makes a line invalid or unstable silently.
    fn check_fixed_point(
        &self,
        rule: RuleId,
        form: &[u8],
        again: &mut Vec<u8>,
        rewrite: &mut Rewrite,
    ) -> Result<(), RuleRefusal> {
        let rules = self.rules.as_ref().expect("a rule fired");
        let refuse = |fault| RuleRefusal::new(rules.label(rule), fault);
        let uri = UriRef::parse_bytes(form).map_err(|_| refuse(RuleFault::MadeInvalid))?;
        again.clear();
        match self.write_protocol(&uri, again, None, rewrite) {
            Ok(_) if again[..] == *form => Ok(()),
            Ok(_) => Err(refuse(RuleFault::NotAFixedPoint)),
            Err(_) => Err(refuse(RuleFault::MadeInvalid)),
        }
    }

    /// Whether this rung certainly leaves `uri` as written, by a test
    /// cheaper than the rewrite: the string rung's (§6.2.1), and the syntax
    /// rung's, which most references pass. At the scheme rung most need
    /// rewriting, and the one-pass rewrite of one that does not costs less
    /// than testing first, the test's checks (case, `%`, `/.`, the port)
    /// being the rewrite's own (callgrind counts in the README's
    /// "Throughput, round 3").
    fn leaves_alone(&self, uri: &UriRef<'_>) -> bool {
        match self.rung {
            Rung::String => true,
            Rung::Syntax => syntax_leaves_alone(uri),
            Rung::Scheme | Rung::Protocol => false,
        }
    }

    /// Writes each component of `uri` in canonical form, in §5.3 order.
    fn write(&self, uri: &UriRef<'_>, out: &mut Vec<u8>) -> Result<Changes, InvalidUri> {
        self.write_laid_out(uri, out).map(|(changes, _)| changes)
    }

    /// [`Normalizer::write`], with where each component of the form went.
    fn write_laid_out(
        &self,
        uri: &UriRef<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(Changes, Offsets), InvalidUri> {
        rewrite::rewrite(uri, self.rung >= Rung::Scheme, out)
    }
}

/// The reference `form` a normalizer wrote, its components where `layout`
/// says [`Normalizer::write_laid_out`] put them: the form's [`UriRef`]
/// without parsing it again.
fn laid_out(form: &[u8], layout: Offsets) -> UriRef<'_> {
    // Every rung writes ASCII (tested as a property); checked anyway, by
    // `is_ascii`'s word-at-a-time scan, cheaper than `from_utf8`'s.
    assert!(form.is_ascii(), "the scheme rung writes ASCII");
    // SAFETY: ASCII bytes, as just asserted, are UTF-8.
    let text = unsafe { std::str::from_utf8_unchecked(form) };
    UriRef::from_offsets(text, layout)
}

/// A conservative, cheap test that no rule of the syntax rung would change
/// `uri`: `true` only when that is certain. A reference in lower case,
/// without `%` or dot segment, passes it.
fn syntax_leaves_alone(uri: &UriRef<'_>) -> bool {
    let no_upper = |s: &str| !swar::has_ascii_uppercase(s.as_bytes());
    if uri.has_percent_encoding() || !uri.scheme().is_none_or(no_upper) {
        return false;
    }
    let path = uri.path().as_bytes();
    // A dot segment starts with `/.` (checked for only where dots are removed).
    if uri.scheme().is_some() && path.starts_with(b"/") && swar::has_slash_dot(path) {
        return false;
    }
    let Some(host) = uri.host() else {
        return true;
    };
    let host_ok = match uri.host_tag() {
        Some(HostTag::RegName) => no_upper(host),
        Some(HostTag::Ipv4) => true,
        _ => false,
    };
    // An empty port (`h:`) is left to the rewrite to judge.
    host_ok && uri.port() != Some("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::HostKind;
    use proptest::prelude::*;

    #[test]
    fn the_string_rung_keeps_the_reference_as_written_on_every_path() {
        let input = "HTTP://User:pw@WWW.Example.COM:80/a/./b/../%7euser/?q=%2f#";
        let string = Normalizer::new(Rung::String);
        assert_eq!(string.normalize(input).unwrap(), input);
        let (mut out, mut fired) = (Vec::new(), Vec::new());
        string
            .normalize_traced(
                input.as_bytes(),
                &mut out,
                &mut fired,
                &mut Scratch::default(),
            )
            .unwrap();
        assert_eq!(out, input.as_bytes());
        assert!(string.normalize("http://a b/").is_err(), "still validated");
    }

    /// Everything a `UriRef` tells, to compare two of them.
    fn components<'a>(
        uri: &UriRef<'a>,
    ) -> (
        [Option<&'a str>; 7],
        &'a str,
        Option<HostKind>,
        bool,
        &'a str,
    ) {
        let parts = [
            uri.scheme(),
            uri.authority(),
            uri.userinfo(),
            uri.host(),
            uri.port(),
            uri.query(),
            uri.fragment(),
        ];
        let path = uri.path();
        (
            parts,
            path,
            uri.host_kind(),
            uri.has_percent_encoding(),
            uri.as_str(),
        )
    }

    /// The positions the writer keeps are those the parser finds in its output.
    fn assert_layout_is_parsed(input: &[u8]) {
        let Ok(uri) = UriRef::parse_bytes(input) else {
            return;
        };
        for rung in [Rung::Syntax, Rung::Scheme] {
            let mut form = Vec::new();
            let Ok((_, layout)) = Normalizer::new(rung).write_laid_out(&uri, &mut form) else {
                continue;
            };
            let parsed = UriRef::parse_bytes(&form).expect("a written form parses");
            assert_eq!(layout.check(&form), Ok(()), "{rung}: {layout:?}");
            assert_eq!(
                components(&laid_out(&form, layout)),
                components(&parsed),
                "{rung}"
            );
        }
    }

    #[test]
    fn layout_is_parsed_on_the_sample_and_the_conformance_vectors() {
        let sample = include_str!("../../../../testdata/sample/urls.txt");
        let fluent =
            include_str!("../../../../testdata/conformance/fluent-uri/fluent_uri_normalize.tsv");
        let vectors = fluent.lines().flat_map(|l| l.split('\t'));
        let extra = [
            "http://%31.2.3.4/",
            "HTTP://u:p@EXAMPLE.com:80/a/./b?Q#F",
            "http://[::FFFF:1.2.3.4]:/",
            "file://localhost/etc",
            "http://xn--n3h.example/%E2%98%83",
            "http://%E2%98%83.example/",
            "x://[v1.A]/",
            "a:b//c/../d",
            "//h:0080/p",
            "http://h:/",
            "//:0",
        ];
        for line in sample.lines().chain(vectors).chain(extra) {
            assert_layout_is_parsed(line.as_bytes());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(5000))]

        #[test]
        fn layout_is_parsed(input in "([hHfF][a-zA-Z]{0,4}:)?(//([a-z%0-9]{0,3}@)?([a-zA-Z0-9.%]{0,10}|\\[[0-9a-fA-F:.]{2,12}\\])(:[0-9]{0,3})?)?(/[a-zA-Z0-9.%]{0,4}){0,4}(\\?[a-zA-Z.=&%]{0,6})?(#[a-z%/]{0,3})?") {
            assert_layout_is_parsed(input.as_bytes());
        }

        /// The syntax rung's test never claims it leaves a reference alone
        /// when its rewrite would change it.
        #[test]
        fn the_syntax_test_agrees_with_the_rewrite(input in "[hHfFmMuU][a-zA-Z]{0,5}:(//[a-zA-Z0-9.]{0,8}(:[0-9]{0,3})?)?(/[a-zA-Z0-9.%]{0,4}){0,4}(\\?[a-zA-Z.=&]{0,6})?") {
            let Ok(uri) = UriRef::parse(&input) else { return Ok(()) };
            let mut full = Vec::new();
            if Normalizer::new(Rung::Syntax).write(&uri, &mut full).is_ok() && syntax_leaves_alone(&uri) {
                prop_assert_eq!(String::from_utf8(full).unwrap(), input);
            }
        }
    }
}
