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

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::query::retain_params;
use super::{Events, Label, RuleId, RulesError, Scratch, WebParts, regex_problem};
use crate::escape::escape_str;

/// The providers of every ClearURLs file, in order, and what finds the
/// few a URI may match without trying every pattern.
#[derive(Default)]
pub(super) struct Providers {
    list: Vec<Provider>,
    prefilter: Option<Prefilter>,
    /// The [`RuleId`] of the first provider.
    first_id: u32,
    /// Told apart from every other list compiled in the process, so that
    /// a thread's [`Memo`] is never read for a list it was not made for.
    id: u64,
}

/// What applying a list of providers remembers from one URI to the next,
/// in the scratch of the thread: URIs repeat their hosts and, far more,
/// their parameter names (`utm_source`, `fbclid`, `id`).
#[derive(Default)]
pub(super) struct Memo {
    /// The [`Providers::id`] of the list the rest was made for; 0 is none.
    owner: u64,
    /// The last authority searched for the providers' literals, and the
    /// providers whose literal it holds: a provider that changed the query
    /// leaves the authority as it was, and the patterns are matched again.
    authority: Vec<u8>,
    authority_owners: Vec<usize>,
    verdicts: Verdicts,
}

/// Whether a provider's whole-name expression matches a name, for the
/// names asked about before, up to [`Verdicts::ENTRIES`] of them (then
/// all are forgotten, and remembered again as they come).
#[derive(Default)]
struct Verdicts {
    /// Keyed by the provider's index (4 bytes) and the name.
    known: HashMap<Vec<u8>, bool, ahash::RandomState>,
    /// The key being looked up, made here not to allocate one a name.
    key: Vec<u8>,
}

impl Verdicts {
    const ENTRIES: usize = 8192;
    /// Longer names (rare, and seldom repeated) are not remembered, which
    /// bounds the memory to about a megabyte a thread.
    const NAME_BYTES: usize = 64;

    /// `decide(name)` for the provider `provider`, remembered.
    fn is_field(
        &mut self,
        provider: usize,
        name: &[u8],
        decide: impl FnOnce(&[u8]) -> bool,
    ) -> bool {
        if name.len() > Verdicts::NAME_BYTES {
            return decide(name);
        }
        let provider = u32::try_from(provider).expect("fewer than 2^32 providers");
        self.key.clear();
        self.key.extend_from_slice(&provider.to_le_bytes());
        self.key.extend_from_slice(name);
        if let Some(&known) = self.known.get(self.key.as_slice()) {
            return known;
        }
        let verdict = decide(name);
        if self.known.len() >= Verdicts::ENTRIES {
            self.known.clear();
        }
        self.known.insert(self.key.clone(), verdict);
        verdict
    }
}

/// The providers a URI may match: most patterns require a literal
/// (`…amazon(?:\.[a-z]{2,})…` requires `amazon`), and one Aho-Corasick pass
/// finds every such literal at once (without regard to ASCII case, as the
/// patterns match); only the providers whose literal is there, and those
/// whose pattern requires none (`.*`), are tried. A literal the pattern
/// requires within the authority is looked for there only; one it requires
/// at the start of a label there (`^https?:\/\/(?:[a-z0-9-]+\.)*?amazon…`,
/// the form of nearly every provider), at those starts only.
struct Prefilter {
    label_starts: LabelStarts,
    in_authority: Literals,
    anywhere: Literals,
    always: Vec<usize>,
}

/// Literals and the provider each belongs to.
struct Literals {
    /// None when there are none.
    automaton: Option<AhoCorasick>,
    owners: Vec<usize>,
}

impl Literals {
    fn new(pairs: Vec<(Vec<u8>, usize)>) -> Result<Literals, String> {
        let (literals, owners): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        // A full DFA: one transition a byte, where the default (an NFA)
        // follows failure links, which an overlapping search of a few
        // hundred literals does at nearly every byte.
        let automaton = match literals.is_empty() {
            true => None,
            false => Some(
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(&literals)
                    .map_err(|e| e.to_string())?,
            ),
        };
        Ok(Literals { automaton, owners })
    }

    /// The owners of the literals in `haystack`, appended to `owners`.
    fn find(&self, haystack: &[u8], owners: &mut Vec<usize>) {
        if let Some(automaton) = &self.automaton {
            owners.extend(
                automaton
                    .find_overlapping_iter(haystack)
                    .map(|m| self.owners[m.pattern().as_usize()]),
            );
        }
    }
}

/// Literals a match holds at the start of a label of the authority, and
/// the provider each belongs to, by their first three bytes: one lookup a
/// label start (the authority's, and after each `.`) in a table small
/// enough to stay in the cache, where a search through every literal takes
/// a transition a byte, in a table that does not.
struct LabelStarts {
    /// The literals, lower-cased, and their owners.
    by_start: HashMap<[u8; 3], Vec<Owned>, ahash::RandomState>,
}

/// A literal and the provider it belongs to.
type Owned = (Vec<u8>, usize);

impl LabelStarts {
    /// `pairs`' literals are three bytes long or more.
    fn new(pairs: Vec<Owned>) -> LabelStarts {
        let mut by_start: HashMap<_, Vec<_>, _> = HashMap::default();
        for (literal, owner) in pairs {
            let literal = literal.to_ascii_lowercase();
            by_start
                .entry(start_of(&literal).expect("three bytes or more"))
                .or_default()
                .push((literal, owner));
        }
        LabelStarts { by_start }
    }

    /// The owners of the literals that start a label of `authority`,
    /// appended to `owners`.
    fn find(&self, authority: &[u8], owners: &mut Vec<usize>) {
        if self.by_start.is_empty() {
            return;
        }
        let dots = authority.iter().enumerate().filter(|&(_, &b)| b == b'.');
        for at in std::iter::once(0).chain(dots.map(|(dot, _)| dot + 1)) {
            let label = &authority[at..];
            let Some(literals) = start_of(label).and_then(|start| self.by_start.get(&start)) else {
                continue;
            };
            owners.extend(literals.iter().filter_map(|(literal, owner)| {
                let here = label.get(..literal.len())?;
                here.eq_ignore_ascii_case(literal).then_some(*owner)
            }));
        }
    }
}

/// The first three bytes of `text`, lower-cased.
fn start_of(text: &[u8]) -> Option<[u8; 3]> {
    match *text {
        [a, b, c, ..] => Some([a, b, c].map(|x| x.to_ascii_lowercase())),
        _ => None,
    }
}

impl Prefilter {
    fn new(list: &[Provider]) -> Result<Prefilter, String> {
        let (mut label_starts, mut in_authority) = (Vec::new(), Vec::new());
        let (mut anywhere, mut always) = (Vec::new(), Vec::new());
        for (i, provider) in list.iter().enumerate() {
            let pattern = provider.pattern.as_str();
            if let Some(literal) = label_start_literal(pattern) {
                label_starts.push((literal, i));
            } else if let Some(literal) = authority_literal(pattern) {
                in_authority.push((literal, i));
            } else if let Some(literal) = required_literal(pattern) {
                anywhere.push((literal, i));
            } else {
                always.push(i);
            }
        }
        Ok(Prefilter {
            label_starts: LabelStarts::new(label_starts),
            in_authority: Literals::new(in_authority)?,
            anywhere: Literals::new(anywhere)?,
            always,
        })
    }

    /// The providers that may match `uri`, in order, into `candidates`;
    /// the authority searched again only when it is not `memo`'s last.
    fn candidates(
        &self,
        uri: &[u8],
        authority: &[u8],
        memo: &mut Memo,
        candidates: &mut Vec<usize>,
    ) {
        // The memo starts with no authority and no owners, which is right:
        // the literals are not empty, so none is in an empty authority.
        if memo.authority != authority {
            memo.authority.clear();
            memo.authority.extend_from_slice(authority);
            memo.authority_owners.clear();
            self.label_starts
                .find(authority, &mut memo.authority_owners);
            self.in_authority
                .find(authority, &mut memo.authority_owners);
        }
        candidates.clear();
        candidates.extend_from_slice(&self.always);
        candidates.extend_from_slice(&memo.authority_owners);
        self.anywhere.find(uri, candidates);
        candidates.sort_unstable();
        candidates.dedup();
    }
}

/// What may end an authority: a literal holding none of these, reached
/// from `://` through pieces that match none of them, lies in it.
const AUTHORITY_ENDS: &[u8] = b"/?#";

/// The longest literal (three bytes or more) of a pattern of the form
/// `^https?:\/\/…` that every match holds within the authority: a piece
/// of the top-level concatenation after the scheme, with no piece before
/// it able to match past the authority.
fn authority_literal(pattern: &str) -> Option<Vec<u8>> {
    let hir = parse_pattern(pattern.strip_prefix(r"^https?:\/\/")?)?;
    let mut best: Option<Vec<u8>> = None;
    for piece in top_level_pieces(&hir) {
        if let HirKind::Literal(literal) = piece.kind() {
            let longer = best.as_ref().is_none_or(|b| literal.0.len() > b.len());
            if literal.0.len() >= 3 && longer && !may_end_authority(piece) {
                best = Some(literal.0.to_vec());
            }
        }
        if may_end_authority(piece) {
            break;
        }
    }
    best
}

/// The first literal (three bytes or more) of a pattern of the form
/// `^https?:\/\/…` that every match holds within the authority at the
/// start of a label: a piece of the top-level concatenation after the
/// scheme, with only pieces before it that end with a `.` or match
/// nothing (`(?:[a-z0-9-]+\.)*?`).
fn label_start_literal(pattern: &str) -> Option<Vec<u8>> {
    let hir = parse_pattern(pattern.strip_prefix(r"^https?:\/\/")?)?;
    for piece in top_level_pieces(&hir) {
        if let HirKind::Literal(literal) = piece.kind()
            && literal.0.len() >= 3
            && !may_end_authority(piece)
        {
            return Some(literal.0.to_vec());
        }
        if may_end_authority(piece) || !empty_or_ends_with_dot(piece) {
            return None;
        }
    }
    None
}

/// Whether every match of `hir` is empty or ends with a `.`: what follows
/// it in an authority starts a label.
fn empty_or_ends_with_dot(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Repetition(repetition) => empty_or_ends_with_dot(&repetition.sub),
        HirKind::Capture(capture) => empty_or_ends_with_dot(&capture.sub),
        HirKind::Concat(pieces) => {
            pieces.last().is_some_and(ends_with_dot) || pieces.iter().all(empty_or_ends_with_dot)
        }
        HirKind::Alternation(alternatives) => alternatives.iter().all(empty_or_ends_with_dot),
        HirKind::Literal(_) | HirKind::Class(_) => ends_with_dot(hir),
    }
}

/// Whether every match of `hir` ends with a `.` (and so is not empty).
fn ends_with_dot(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Literal(literal) => literal.0.last() == Some(&b'.'),
        HirKind::Repetition(repetition) => repetition.min > 0 && ends_with_dot(&repetition.sub),
        HirKind::Capture(capture) => ends_with_dot(&capture.sub),
        HirKind::Concat(pieces) => pieces.last().is_some_and(ends_with_dot),
        HirKind::Alternation(alternatives) => alternatives.iter().all(ends_with_dot),
        HirKind::Empty | HirKind::Look(_) | HirKind::Class(_) => false,
    }
}

/// Whether `hir` can match a byte that ends an authority.
fn may_end_authority(hir: &Hir) -> bool {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Literal(literal) => literal.0.iter().any(|b| AUTHORITY_ENDS.contains(b)),
        HirKind::Class(Class::Bytes(class)) => class.ranges().iter().any(|r| {
            AUTHORITY_ENDS
                .iter()
                .any(|&b| (r.start()..=r.end()).contains(&b))
        }),
        HirKind::Class(Class::Unicode(class)) => class.ranges().iter().any(|r| {
            AUTHORITY_ENDS
                .iter()
                .any(|&b| (r.start()..=r.end()).contains(&char::from(b)))
        }),
        HirKind::Repetition(repetition) => may_end_authority(&repetition.sub),
        HirKind::Capture(capture) => may_end_authority(&capture.sub),
        HirKind::Concat(pieces) | HirKind::Alternation(pieces) => {
            pieces.iter().any(may_end_authority)
        }
    }
}

/// A pattern as the prefilters read it: bytes, case as written.
fn parse_pattern(pattern: &str) -> Option<Hir> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .build()
        .parse(pattern)
        .ok()
}

/// The pieces of a top-level concatenation: each is in every match.
fn top_level_pieces(hir: &Hir) -> &[Hir] {
    match hir.kind() {
        HirKind::Concat(pieces) => pieces.as_slice(),
        _ => std::slice::from_ref(hir),
    }
}

/// The longest literal of three bytes or more that every match of
/// `pattern` contains: the longest literal among the pieces of its
/// top-level concatenation (each piece is in every match), leaving out
/// pieces of `https://`, which every web URI holds and so tell nothing.
fn required_literal(pattern: &str) -> Option<Vec<u8>> {
    required_literal_besides(pattern, None)
}

/// The same, leaving out `known` too (a literal the URI is known to hold).
fn required_literal_besides(pattern: &str, known: Option<&[u8]>) -> Option<Vec<u8>> {
    let hir = parse_pattern(pattern)?;
    top_level_pieces(&hir)
        .iter()
        .filter_map(|piece| match piece.kind() {
            HirKind::Literal(literal) => Some(literal.0.to_vec()),
            _ => None,
        })
        .filter(|literal| literal.len() >= 3 && !in_every_web_uri(literal))
        .filter(|literal| known.is_none_or(|k| !k.eq_ignore_ascii_case(literal)))
        .max_by_key(Vec::len)
}

fn in_every_web_uri(literal: &[u8]) -> bool {
    b"https://"
        .windows(literal.len().min(8))
        .any(|w| w.eq_ignore_ascii_case(literal))
}

/// Expressions on the whole URI behind a cheaper test: when each requires a
/// literal (other than its provider's pattern's, which the URI has), one
/// search for those literals comes first, and most URIs stop there
/// (`\/login`, `.cgi`). The search is an expression of the literals alone,
/// which the `regex` crate runs as a SIMD literal search (Teddy): an
/// Aho-Corasick search stopped at every byte that starts a literal (every
/// `.` of the URI for `.cgi`), a fifth of the rules' instructions.
struct Guarded {
    expression: Regex,
    literals: Option<Regex>,
}

impl Guarded {
    /// Any of `texts`, guarded when every one requires a literal other
    /// than the provider's `pattern`'s (in UTF-8, to be escaped).
    fn any_of(field: &str, texts: &[&str], pattern: &str) -> Result<Option<Guarded>, String> {
        let Some(whole) = any_of(field, texts, false)? else {
            return Ok(None);
        };
        let known = required_literal(pattern);
        let literals: Option<Vec<String>> = texts
            .iter()
            .map(|text| {
                let literal = required_literal_besides(text, known.as_deref())?;
                String::from_utf8(literal).ok().map(|l| regex::escape(&l))
            })
            .collect();
        let literals = match literals {
            Some(literals) => Some(expression(field, &literals.join("|"))?),
            None => None,
        };
        Ok(Some(Guarded {
            expression: whole,
            literals,
        }))
    }

    fn is_match(&self, uri: &[u8]) -> bool {
        self.literals.as_ref().is_none_or(|l| l.is_match(uri)) && self.expression.is_match(uri)
    }
}

struct Provider {
    /// `data.min.json provider amazon`.
    label: String,
    pattern: Regex,
    /// How the pattern is matched.
    shape: Shape,
    exceptions: Option<Guarded>,
    redirections: Option<Guarded>,
    complete: bool,
    raw_rules: Vec<Regex>,
    /// `rules` and `referralMarketing`, as one whole-name expression.
    fields: Option<Regex>,
    /// How a name the expression matches starts, when that is known.
    field_starts: Option<NameStarts>,
}

/// The first bytes every name a whole-name expression matches starts
/// with (lower-cased; the expressions ignore case): most parameter names
/// (`q`, `id`, `page`) start with none of them and are passed without
/// running the expression. Known when every alternative begins with a
/// literal (`utm_[a-z]+` with `utm_`, `[?&]gclid` with `?g` or `&g`).
struct NameStarts {
    /// Starts of one byte: a bit per byte value.
    single: [u64; 4],
    /// The first two bytes of longer starts, sorted.
    pairs: Vec<[u8; 2]>,
}

impl NameStarts {
    fn of(texts: &[&str]) -> Option<NameStarts> {
        let alternatives: Vec<String> = texts.iter().map(|t| format!("(?:{t})")).collect();
        // Parsed with case as written: the literals are lower-cased below.
        let hir = parse_pattern(&alternatives.join("|"))?;
        let prefixes = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
        let mut starts = NameStarts {
            single: [0; 4],
            pairs: Vec::new(),
        };
        for literal in prefixes.literals()? {
            match *literal.as_bytes() {
                [] => return None,
                [only] => {
                    let only = only.to_ascii_lowercase();
                    starts.single[usize::from(only >> 6)] |= 1 << (only & 63);
                }
                [first, second, ..] => starts
                    .pairs
                    .push([first.to_ascii_lowercase(), second.to_ascii_lowercase()]),
            }
        }
        starts.pairs.sort_unstable();
        starts.pairs.dedup();
        Some(starts)
    }

    /// Whether `name` may match: it starts with one of the starts.
    fn may_match(&self, name: &[u8]) -> bool {
        let Some(first) = name.first().map(u8::to_ascii_lowercase) else {
            return false;
        };
        if self.single[usize::from(first >> 6)] & (1 << (first & 63)) != 0 {
            return true;
        }
        name.get(1).is_some_and(|second| {
            self.pairs
                .binary_search(&[first, second.to_ascii_lowercase()])
                .is_ok()
        })
    }
}

impl Providers {
    /// Reads the providers of the ClearURLs file `name` and says how many
    /// there were.
    pub(super) fn add(&mut self, name: &str, text: &str) -> Result<usize, RulesError> {
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
        let providers = list.0.ok_or_else(|| {
            fail(
                None,
                "not a ClearURLs rules file: it has no \"providers\"".into(),
            )
        })?;
        let count = providers.len();
        for (provider, value) in providers {
            let compiled = Provider::compile(name, &provider, &value).map_err(|problem| {
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
        self.list.iter().map(|p| Label::new(p.label.clone()))
    }

    /// Numbers the providers from `first_id` and builds the set of their
    /// patterns; called once every file is read.
    pub(super) fn finish(&mut self, first_id: u32) -> Result<(), RulesError> {
        static LISTS: AtomicU64 = AtomicU64::new(1);
        self.first_id = first_id;
        self.id = LISTS.fetch_add(1, Ordering::Relaxed);
        if self.list.is_empty() {
            return Ok(());
        }
        let prefilter = Prefilter::new(&self.list).map_err(|e| RulesError {
            file: "the ClearURLs files".into(),
            line: None,
            problem: format!("their URL patterns together are too many: {e}"),
        })?;
        self.prefilter = Some(prefilter);
        Ok(())
    }

    /// Applies every provider matching the URI at `out[start..]` (whose
    /// parts are `parts`), in order, calling `fired` with each that changed
    /// it; with the URI's parts after them, none if a provider took it apart.
    pub(super) fn apply(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        mut parts: WebParts,
        scratch: &mut Scratch,
        fired: &mut dyn FnMut(RuleId),
    ) -> (Events, Option<WebParts>) {
        let mut events = Events::default();
        let Some(prefilter) = &self.prefilter else {
            return (events, Some(parts));
        };
        let Scratch {
            candidates,
            decoded,
            providers: memo,
            ..
        } = scratch;
        if memo.owner != self.id {
            *memo = Memo {
                owner: self.id,
                ..Memo::default()
            };
        }
        let mut next = 0;
        // After a provider changes the URI, the patterns are matched
        // again against the new one, as the add-on does, from the next
        // provider on.
        'matching: while next < self.list.len() {
            let uri = &out[start..];
            prefilter.candidates(uri, &uri[parts.authority.clone()], memo, candidates);
            let from = next;
            for &i in candidates.iter().filter(|&&i| i >= from) {
                next = i + 1;
                let provider = &self.list[i];
                if !provider.matches(&out[start..]) {
                    continue;
                }
                let (changed, happened) =
                    provider.apply(out, start, &parts, decoded, &mut |name| {
                        provider.is_field(i, name, &mut memo.verdicts)
                    });
                events.add(happened);
                if changed {
                    fired(RuleId::new(self.first_id + i as u32));
                    match WebParts::of(&out[start..]) {
                        Some(moved) => parts = moved,
                        None => return (events, None),
                    }
                    continue 'matching;
                }
            }
            break;
        }
        (events, Some(parts))
    }
}

/// The two forms of pattern nearly every provider has, matched without
/// running the expression.
enum Shape {
    /// `.*` or empty (`globalRules`): every URI.
    EveryUri,
    /// ClearURLs' form for a site, `^https?:\/\/(?:[a-z0-9-]+\.)*?`, a
    /// literal, `(?:\.[a-z]{2,}){1,}` ([`Shape::TEMPLATE`]): the literal.
    Site(Vec<u8>),
    /// Any other: the expression.
    Expression,
}

impl Shape {
    const TEMPLATE: [&str; 2] = [r"^https?:\/\/(?:[a-z0-9-]+\.)*?", r"(?:\.[a-z]{2,}){1,}"];

    fn of(pattern: &str) -> Shape {
        if matches!(pattern, "" | ".*") {
            return Shape::EveryUri;
        }
        let [before, after] = Shape::TEMPLATE;
        let middle = pattern
            .strip_prefix(before)
            .and_then(|p| p.strip_suffix(after));
        match middle.and_then(parse_pattern).as_ref().map(Hir::kind) {
            Some(HirKind::Literal(literal)) => Shape::Site(literal.0.to_vec()),
            _ => Shape::Expression,
        }
    }
}

/// Whether `uri` matches [`Shape::TEMPLATE`] around `literal`, as the
/// expression would (ASCII case ignored): after `http://` or `https://`,
/// labels of letters, digits and `-` each ended by a `.`, any number of
/// them, then `literal`, a `.` and two letters.
fn site_matches(literal: &[u8], uri: &[u8]) -> bool {
    let scheme_end = match uri.get(..8) {
        Some(s) if s.eq_ignore_ascii_case(b"https://") => 8,
        _ if uri
            .get(..7)
            .is_some_and(|s| s.eq_ignore_ascii_case(b"http://")) =>
        {
            7
        }
        _ => return false,
    };
    let rest = &uri[scheme_end..];
    let mut label_start = 0;
    loop {
        if site_here(literal, &rest[label_start..]) {
            return true;
        }
        // The next label, if this one is letters, digits and `-`, then `.`.
        let label = rest[label_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-')
            .count();
        if label == 0 || rest.get(label_start + label) != Some(&b'.') {
            return false;
        }
        label_start += label + 1;
    }
}

/// Whether `text` starts with `literal` (ASCII case ignored), a `.` and two
/// letters.
fn site_here(literal: &[u8], text: &[u8]) -> bool {
    let Some((here, after)) = text.split_at_checked(literal.len()) else {
        return false;
    };
    here.eq_ignore_ascii_case(literal)
        && matches!(after, [b'.', a, b, ..] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic())
}

impl Provider {
    /// Whether the provider's pattern matches `uri`.
    fn matches(&self, uri: &[u8]) -> bool {
        match &self.shape {
            Shape::EveryUri => true,
            Shape::Site(literal) => site_matches(literal, uri),
            Shape::Expression => self.pattern.is_match(uri),
        }
    }

    fn compile(file_name: &str, name: &str, value: &Value) -> Result<Provider, String> {
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

    /// Whether `name` is one of the fields (`rules` and `referralMarketing`)
    /// of the provider, the `index`th: the expression runs only for a name
    /// that starts as a field may, and once a name (`verdicts`).
    fn is_field(&self, index: usize, name: &[u8], verdicts: &mut Verdicts) -> bool {
        let Some(fields) = &self.fields else {
            return false;
        };
        self.field_starts.as_ref().is_none_or(|s| s.may_match(name))
            && verdicts.is_field(index, name, |name| fields.is_match(name))
    }

    /// Applies the provider to the URI at `out[start..]`, which its pattern
    /// matches: whether it changed it, and what else happened. `is_field`
    /// is [`Provider::is_field`]; `decoded` is scratch.
    fn apply(
        &self,
        out: &mut Vec<u8>,
        start: usize,
        parts: &WebParts,
        decoded: &mut Vec<u8>,
        is_field: &mut dyn FnMut(&[u8]) -> bool,
    ) -> (bool, Events) {
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
        if self.fields.is_none() {
            return (changed, Events::default());
        }
        // The fragment first: removing it leaves the query where it was.
        let moved;
        let parts = match changed {
            false => parts,
            true => match WebParts::of(&out[start..]) {
                Some(after_raw_rules) => {
                    moved = after_raw_rules;
                    &moved
                }
                None => return (changed, Events::default()),
            },
        };
        if let Some(fragment) = parts.fragment.clone() {
            let fragment = start + fragment.start..start + fragment.end;
            changed |= retain_params(out, fragment, |name| !is_field(name));
        }
        if let Some(query) = parts.query.clone() {
            // The add-on matches query names decoded, fragment names as written.
            let query = start + query.start..start + query.end;
            changed |= retain_params(out, query, |name| !is_field(form_decoded(name, decoded)));
        }
        (changed, Events::default())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The same providers with every shortcut off: each provider tried,
    /// its pattern run, every name and URI given to the expressions (and,
    /// given a fresh scratch, nothing remembered from another URI).
    fn naive(providers: &mut Providers) {
        let every = providers.list.len();
        let prefilter = providers.prefilter.as_mut().unwrap();
        prefilter.always = (0..every).collect();
        prefilter.label_starts = LabelStarts::new(Vec::new());
        prefilter.in_authority = Literals::new(Vec::new()).unwrap();
        prefilter.anywhere = Literals::new(Vec::new()).unwrap();
        for provider in &mut providers.list {
            provider.shape = Shape::Expression;
            provider.field_starts = None;
            for guarded in [&mut provider.exceptions, &mut provider.redirections]
                .into_iter()
                .flatten()
            {
                guarded.literals = None;
            }
        }
    }

    /// The benchmark list on the sample's lines, and on each with a
    /// parameter of every rule name appended: the shortcuts change nothing.
    /// The fast list keeps one scratch through the lines, as a thread does,
    /// so that what it remembers of a line serves the next; the naive one
    /// starts each line afresh.
    #[test]
    fn shortcuts_agree_with_trying_every_provider() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
        let list = std::fs::read_to_string(root.join("rules/bench-clearurls.json")).unwrap();
        let sample = std::fs::read_to_string(root.join("sample/urls.txt")).unwrap();
        let compile = || {
            let mut providers = Providers::default();
            providers.add("list", &list).unwrap();
            providers.finish(0).unwrap();
            providers
        };
        let (fast, mut slow) = (compile(), compile());
        naive(&mut slow);
        let scheme = crate::normalize::Normalizer::new(crate::normalize::Rung::Scheme);
        let mut kept = Scratch::default();
        let mut checked = 0;
        for line in sample.lines() {
            let Ok(uri) = scheme.normalize(line) else {
                continue;
            };
            let joint = if uri.contains('?') { '&' } else { '?' };
            for uri in [
                uri.clone(),
                format!("{uri}{joint}utm_x=1&ref=2&si=3&gclid=4&q=5"),
            ] {
                let Some(parts) = WebParts::of(uri.as_bytes()) else {
                    continue;
                };
                let run = |providers: &Providers, scratch: &mut Scratch| {
                    let mut out = uri.as_bytes().to_vec();
                    let mut fired = Vec::new();
                    let (events, _) =
                        providers.apply(&mut out, 0, parts.clone(), scratch, &mut |id| {
                            fired.push(id)
                        });
                    (out, fired, events)
                };
                assert_eq!(
                    run(&fast, &mut kept),
                    run(&slow, &mut Scratch::default()),
                    "{uri}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 7964);
    }

    #[test]
    fn required_literals_are_in_every_match() {
        let literal = |p: &str| required_literal(p).map(|l| String::from_utf8(l).unwrap());
        let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
        assert_eq!(literal(amazon).as_deref(), Some("amazon"));
        assert_eq!(
            literal(r"^https?:\/\/(?:www\.)?google\.com\/url").as_deref(),
            Some("google.com/url")
        );
        // Alternatives, classes and short pieces require no literal.
        assert_eq!(literal(".*"), None);
        assert_eq!(literal(""), None);
        assert_eq!(literal("a|b"), None);
        assert_eq!(literal(r"^https?:\/\/(?:a|bb)\.ly").as_deref(), Some(".ly"));
        assert_eq!(
            literal(r"^https?:\/\/(?:[a-z0-9-]+\.)*?bbc(?:\.[a-z]{2,}){1,}").as_deref(),
            Some("bbc")
        );
    }

    #[test]
    fn authority_literals_are_in_the_authority_of_every_match() {
        let literal = |p: &str| authority_literal(p).map(|l| String::from_utf8(l).unwrap());
        let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
        assert_eq!(literal(amazon).as_deref(), Some("amazon"));
        // After a piece that can pass the authority, a literal may be anywhere.
        assert_eq!(literal(r"^https?:\/\/.*?amazon"), None);
        assert_eq!(literal(r"^https?:\/\/[^?]*amazon"), None);
        // A literal past the authority's end is not in it.
        assert_eq!(
            literal(r"^https?:\/\/(?:www\.)?google\.com\/url").as_deref(),
            None
        );
        assert_eq!(
            literal(r"^https?:\/\/(?:www\.)?google\.com").as_deref(),
            Some("google.com")
        );
        // Not anchored at a web scheme: no authority to look in.
        assert_eq!(literal(r"amazon\.com"), None);
        let authority = |uri: &'static [u8]| &uri[WebParts::of(uri).unwrap().authority];
        assert_eq!(authority(b"https://u@a.example:80/p?q"), b"u@a.example:80");
        assert_eq!(authority(b"http://a?q/"), b"a");
    }

    #[test]
    fn label_start_literals_start_a_label_in_every_match() {
        let literal = |p: &str| label_start_literal(p).map(|l| String::from_utf8(l).unwrap());
        let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
        assert_eq!(literal(amazon).as_deref(), Some("amazon"));
        assert_eq!(
            literal(r"^https?:\/\/spa\.example").as_deref(),
            Some("spa.example")
        );
        assert_eq!(
            literal(r"^https?:\/\/(?:www\.)?(?:m\.|[a-z]+\.)*google\.com").as_deref(),
            Some("google.com")
        );
        // Pieces before it that may end elsewhere than after a `.`.
        assert_eq!(literal(r"^https?:\/\/[a-z0-9-]*amazon\.com"), None);
        assert_eq!(literal(r"^https?:\/\/(?:[a-z]+\.|x)*amazon\.com"), None);
        assert_eq!(literal(r"^https?:\/\/(?:www)?amazon\.com"), None);
        // Past the authority, or not in it at all.
        assert_eq!(literal(r"^https?:\/\/google\.com\/url"), None);
        assert_eq!(literal(r"amazon\.com"), None);
    }

    /// The site form's patterns match as their expressions do.
    #[test]
    fn site_shapes_match_as_their_expressions() {
        let pattern = |literal: &str| {
            let [before, after] = Shape::TEMPLATE;
            format!("{before}{literal}{after}")
        };
        let amazon = pattern("amazon");
        assert!(matches!(Shape::of(&amazon), Shape::Site(l) if l == b"amazon"));
        assert!(
            matches!(Shape::of(&pattern(r"e\-passport")), Shape::Site(l) if l == b"e-passport")
        );
        assert!(matches!(Shape::of(".*"), Shape::EveryUri));
        assert!(matches!(Shape::of(""), Shape::EveryUri));
        assert!(matches!(Shape::of(&pattern("a|b")), Shape::Expression));
        assert!(matches!(Shape::of(&pattern("[ab]c")), Shape::Expression));
        assert!(matches!(
            Shape::of(&format!("{amazon}x")),
            Shape::Expression
        ));
        let expression = expression("urlPattern", &amazon).unwrap();
        for uri in [
            "https://amazon.de",
            "HTTP://www.AMAZON.co.uk/x",
            "https://a-b.c1.amazon.de?q",
            "https://amazon.d",
            "https://amazon.d1",
            "https://xamazon.de",
            "https://a..amazon.de",
            "https://.amazon.de",
            "https://a_b.amazon.de",
            "https://u@amazon.de",
            "https://amazon.amazon.de",
            "https://amazon",
            "ftp://amazon.de",
            "https:/amazon.de",
            "https://x/amazon.de",
            "wss://amazon.de",
            "",
        ] {
            assert_eq!(
                site_matches(b"amazon", uri.as_bytes()),
                expression.is_match(uri.as_bytes()),
                "{uri}"
            );
        }
    }

    proptest::proptest! {
        /// Any URI of the bytes that matter to the site form: it matches
        /// as the expression does.
        #[test]
        fn site_form_agrees_with_the_expression(
            uri in "(?:[hH][tT][tT][pP][sS]?:)?(?://)?(?:[aA.zZ0_/@-]|ab|AB){0,12}",
        ) {
            let [before, after] = Shape::TEMPLATE;
            let expression = expression("urlPattern", &format!("{before}ab{after}")).unwrap();
            proptest::prop_assert_eq!(
                site_matches(b"ab", uri.as_bytes()),
                expression.is_match(uri.as_bytes())
            );
        }
    }

    /// Literals in and out of the start of labels, for the providers
    /// tried: every provider whose literal starts a label is found.
    #[test]
    fn label_starts_find_the_literals_that_start_a_label() {
        let starts = LabelStarts::new(vec![
            (b"amazon".to_vec(), 0),
            (b"zon".to_vec(), 1),
            (b"ex.co".to_vec(), 2),
        ]);
        let found = |authority: &[u8]| {
            let mut owners = Vec::new();
            starts.find(authority, &mut owners);
            owners.sort_unstable();
            owners.dedup();
            owners
        };
        assert_eq!(found(b"www.AMAZON.de"), [0]);
        assert_eq!(found(b"amazon"), [0]);
        assert_eq!(found(b"amazo"), Vec::<usize>::new());
        assert_eq!(found(b"zon.de"), [1]);
        assert_eq!(found(b"notamazon.de"), Vec::<usize>::new());
        assert_eq!(found(b"u.x.ex.com:80"), [2]);
        // After the userinfo is no label start: a pattern whose literal
        // follows only a `.` or the `//` does not match there.
        assert_eq!(found(b"u@ex.com"), Vec::<usize>::new());
        assert_eq!(found(b""), Vec::<usize>::new());
        assert_eq!(found(b"a..ex.co."), [2]);
    }

    /// The name starts never turn away a name the expression matches: the
    /// benchmark list's field expressions against names that match them
    /// and names that do not.
    #[test]
    fn name_starts_pass_every_name_that_matches() {
        let texts = [
            "utm_[a-z]+",
            "ref_?",
            "[?&]gclid",
            "wt_?z?mc",
            "vn(?:_[a-z]*)+",
            "si",
            "hsCtaTracking",
            "__s",
            "action_(?:object|type|ref)_map",
        ];
        let starts = NameStarts::of(&texts).unwrap();
        let fields = any_of("rules", &texts, true).unwrap().unwrap();
        for name in [
            "utm_source",
            "UTM_Medium",
            "ref",
            "ref_",
            "?gclid",
            "&GCLID",
            "wtmc",
            "wt_zmc",
            "vn_a_b",
            "si",
            "hsctatracking",
            "__s",
            "action_type_map",
            "q",
            "id",
            "page",
            "s",
            "",
            "gclid",
            "referrer",
            "sid",
        ] {
            if fields.is_match(name.as_bytes()) {
                assert!(starts.may_match(name.as_bytes()), "{name}");
            }
        }
        for name in ["q", "id", "page", "", "gclid", "x"] {
            assert!(!starts.may_match(name.as_bytes()), "{name}");
        }
        // An alternative that starts with a class of many letters: unknown.
        assert!(NameStarts::of(&["[a-z]+_id"]).is_none());
    }

    /// One scratch kept through two lists whose first provider is the same
    /// (index 0) but not its fields, taken in turns: each list's verdicts
    /// and candidates are its own.
    #[test]
    fn the_memo_serves_only_the_list_it_was_made_for() {
        let compile = |field: &str| {
            let text = format!(
                r#"{{"providers":{{"g":{{"urlPattern":".*","rules":["{field}"]}},
                "h":{{"urlPattern":"^https?:\\/\\/(?:[a-z0-9-]+\\.)*?{field}site\\.example","rules":["x"]}}}}}}"#
            );
            let mut providers = Providers::default();
            providers.add("list", &text).unwrap();
            providers.finish(0).unwrap();
            providers
        };
        let (a, b) = (compile("a"), compile("b"));
        let mut scratch = Scratch::default();
        for _ in 0..3 {
            for (providers, expected) in [
                (&a, "https://asite.example/?b=2"),
                (&b, "https://asite.example/?a=1&x=3"),
            ] {
                let uri = b"https://asite.example/?a=1&b=2&x=3";
                let mut out = uri.to_vec();
                let parts = WebParts::of(uri).unwrap();
                providers.apply(&mut out, 0, parts, &mut scratch, &mut |_| {});
                assert_eq!(String::from_utf8(out).unwrap(), expected);
            }
        }
    }

    /// A name's verdict is the expression's, whether remembered, forgotten
    /// (past [`Verdicts::ENTRIES`]) or too long to remember.
    #[test]
    fn verdicts_are_the_expressions() {
        let fields = any_of("rules", &["utm_[a-z]+", "ref_?", "x"], true)
            .unwrap()
            .unwrap();
        let mut verdicts = Verdicts::default();
        let long = "utm_".to_string() + &"a".repeat(Verdicts::NAME_BYTES);
        for round in 0..3 {
            for i in 0..Verdicts::ENTRIES + 10 {
                for name in [
                    format!("utm_{i}"),
                    format!("{i}"),
                    "ref".into(),
                    long.clone(),
                ] {
                    // Provider 1 has no field: the same name, another verdict.
                    for (provider, expected) in [(0, fields.is_match(name.as_bytes())), (1, false)]
                    {
                        let got = verdicts.is_field(provider, name.as_bytes(), |n| {
                            provider == 0 && fields.is_match(n)
                        });
                        assert_eq!(got, expected, "{name} {provider} {round}");
                    }
                }
            }
            assert!(verdicts.known.len() <= Verdicts::ENTRIES);
        }
    }

    proptest::proptest! {
        /// Any names, in any order, with repeats: the remembered verdicts
        /// are the expression's.
        #[test]
        fn verdicts_agree_with_the_expression(
            names in proptest::collection::vec(
                ("[0-2]", "(?:[uUtTmM_%+]|utm_|ref){0,4}"),
                0..200,
            ),
        ) {
            let fields = [
                any_of("rules", &["utm_[a-z]+", "ref_?"], true).unwrap().unwrap(),
                any_of("rules", &["m", "u%"], true).unwrap().unwrap(),
                any_of("rules", &["[a-z_]+"], true).unwrap().unwrap(),
            ];
            let mut verdicts = Verdicts::default();
            for (provider, name) in &names {
                let provider: usize = provider.parse().unwrap();
                let expected = fields[provider].is_match(name.as_bytes());
                let got = verdicts.is_field(provider, name.as_bytes(), |n| fields[provider].is_match(n));
                proptest::prop_assert_eq!(got, expected);
            }
        }
    }
}
