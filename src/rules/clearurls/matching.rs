//! One provider applied to a URI its pattern may match: the pattern's
//! shortcuts (the site form, the guarded exceptions and redirections),
//! the names of the fields it removes and the verdicts remembered for
//! them. It knows one provider at a time; the list's order, the prefilter
//! and the file it came from are the parent's and `load`'s.

use std::collections::HashMap;

use regex::bytes::Regex;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Hir, HirKind};

use super::literals::{parse_pattern, required_literal, required_literal_besides};
use super::load::{any_of, expression};
use crate::rules::query::retain_params;
use crate::rules::{Events, WebParts};

/// Whether a provider's whole-name expression matches a name, for the
/// names asked about before, up to [`Verdicts::ENTRIES`] of them (then
/// all are forgotten, and remembered again as they come).
#[derive(Default)]
pub(super) struct Verdicts {
    /// Keyed by the provider's index (4 bytes) and the name.
    pub(super) known: HashMap<Vec<u8>, bool, ahash::RandomState>,
    /// The key being looked up, made here not to allocate one a name.
    key: Vec<u8>,
}

impl Verdicts {
    pub(super) const ENTRIES: usize = 8192;
    /// Longer names (rare, and seldom repeated) are not remembered, which
    /// bounds the memory to about a megabyte a thread.
    pub(super) const NAME_BYTES: usize = 64;

    /// `decide(name)` for the provider `provider`, remembered.
    pub(super) fn is_field(
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

/// Expressions on the whole URI behind a cheaper test: when each requires a
/// literal (other than its provider's pattern's, which the URI has), one
/// search for those literals comes first, and most URIs stop there
/// (`\/login`, `.cgi`). The search is an expression of the literals alone,
/// which the `regex` crate runs as a SIMD literal search (Teddy): an
/// Aho-Corasick search stopped at every byte that starts a literal (every
/// `.` of the URI for `.cgi`), a fifth of the rules' instructions.
pub(super) struct Guarded {
    expression: Regex,
    pub(super) literals: Option<Regex>,
}

impl Guarded {
    /// Any of `texts`, guarded when every one requires a literal other
    /// than the provider's `pattern`'s (in UTF-8, to be escaped).
    pub(super) fn any_of(
        field: &str,
        texts: &[&str],
        pattern: &str,
    ) -> Result<Option<Guarded>, String> {
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

pub(super) struct Provider {
    /// `data.min.json provider amazon`.
    pub(super) label: String,
    pub(super) pattern: Regex,
    /// How the pattern is matched.
    pub(super) shape: Shape,
    pub(super) exceptions: Option<Guarded>,
    pub(super) redirections: Option<Guarded>,
    pub(super) complete: bool,
    pub(super) raw_rules: Vec<Regex>,
    /// `rules` and `referralMarketing`, as one whole-name expression.
    pub(super) fields: Option<Regex>,
    /// How a name the expression matches starts, when that is known.
    pub(super) field_starts: Option<NameStarts>,
}

/// The first bytes every name a whole-name expression matches starts
/// with (lower-cased; the expressions ignore case): most parameter names
/// (`q`, `id`, `page`) start with none of them and are passed without
/// running the expression. Known when every alternative begins with a
/// literal (`utm_[a-z]+` with `utm_`, `[?&]gclid` with `?g` or `&g`).
pub(super) struct NameStarts {
    /// Starts of one byte: a bit per byte value.
    single: [u64; 4],
    /// The first two bytes of longer starts, sorted.
    pairs: Vec<[u8; 2]>,
}

impl NameStarts {
    pub(super) fn of(texts: &[&str]) -> Option<NameStarts> {
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
    pub(super) fn may_match(&self, name: &[u8]) -> bool {
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

/// The two forms of pattern nearly every provider has, matched without
/// running the expression.
pub(super) enum Shape {
    /// `.*` or empty (`globalRules`): every URI.
    EveryUri,
    /// ClearURLs' form for a site, `^https?:\/\/(?:[a-z0-9-]+\.)*?`, a
    /// literal, `(?:\.[a-z]{2,}){1,}` ([`Shape::TEMPLATE`]): the literal.
    Site(Vec<u8>),
    /// Any other: the expression.
    Expression,
}

impl Shape {
    pub(super) const TEMPLATE: [&str; 2] =
        [r"^https?:\/\/(?:[a-z0-9-]+\.)*?", r"(?:\.[a-z]{2,}){1,}"];

    pub(super) fn of(pattern: &str) -> Shape {
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
pub(super) fn site_matches(literal: &[u8], uri: &[u8]) -> bool {
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
    pub(super) fn matches(&self, uri: &[u8]) -> bool {
        match &self.shape {
            Shape::EveryUri => true,
            Shape::Site(literal) => site_matches(literal, uri),
            Shape::Expression => self.pattern.is_match(uri),
        }
    }

    /// Whether `name` is one of the fields (`rules` and `referralMarketing`)
    /// of the provider, the `index`th: the expression runs only for a name
    /// that starts as a field may, and once a name (`verdicts`).
    pub(super) fn is_field(&self, index: usize, name: &[u8], verdicts: &mut Verdicts) -> bool {
        let Some(fields) = &self.fields else {
            return false;
        };
        self.field_starts.as_ref().is_none_or(|s| s.may_match(name))
            && verdicts.is_field(index, name, |name| fields.is_match(name))
    }

    /// Applies the provider to the URI at `out[start..]`, which its pattern
    /// matches: whether it changed it, and what else happened. `is_field`
    /// is [`Provider::is_field`]; `decoded` is scratch.
    pub(super) fn apply(
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
