//! Which providers a URI may match, found without trying every pattern:
//! the providers' literals searched for at once, in the authority or at
//! its labels' starts. It knows the literals each pattern requires
//! (`literals`), not what a provider does to a URI.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::Memo;
use super::literals::{authority_literal, label_start_literal, required_literal};
use super::matching::Provider;

/// The providers a URI may match: most patterns require a literal
/// (`…amazon(?:\.[a-z]{2,})…` requires `amazon`), and one Aho-Corasick pass
/// finds every such literal at once (without regard to ASCII case, as the
/// patterns match); only the providers whose literal is there, and those
/// whose pattern requires none (`.*`), are tried. A literal the pattern
/// requires within the authority is looked for there only; one it requires
/// at the start of a label there (`^https?:\/\/(?:[a-z0-9-]+\.)*?amazon…`,
/// the form of nearly every provider), at those starts only.
pub(super) struct Prefilter {
    pub(super) label_starts: LabelStarts,
    pub(super) in_authority: Literals,
    pub(super) anywhere: Literals,
    pub(super) always: Vec<usize>,
}

/// Literals and the provider each belongs to.
pub(super) struct Literals {
    /// None when there are none.
    automaton: Option<AhoCorasick>,
    owners: Vec<usize>,
}

impl Literals {
    pub(super) fn new(pairs: Vec<(Vec<u8>, usize)>) -> Result<Literals, String> {
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
    pub(super) fn find(&self, haystack: &[u8], owners: &mut Vec<usize>) {
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
pub(super) struct LabelStarts {
    /// The literals, lower-cased, and their owners.
    by_start: HashMap<[u8; 3], Vec<Owned>, ahash::RandomState>,
}

/// A literal and the provider it belongs to.
type Owned = (Vec<u8>, usize);

impl LabelStarts {
    /// `pairs`' literals are three bytes long or more.
    pub(super) fn new(pairs: Vec<Owned>) -> LabelStarts {
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
    pub(super) fn find(&self, authority: &[u8], owners: &mut Vec<usize>) {
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
    pub(super) fn new(list: &[Provider]) -> Result<Prefilter, String> {
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
    pub(super) fn candidates(
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
