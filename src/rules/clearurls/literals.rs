//! What a provider's pattern says every URI it matches holds: a literal
//! somewhere, one within the authority, one at the start of one of its
//! labels. It reads the patterns' syntax only; it knows nothing of
//! providers, URIs or how the literals are searched for.

use regex_syntax::hir::{Class, Hir, HirKind};

/// What may end an authority: a literal holding none of these, reached
/// from `://` through pieces that match none of them, lies in it.
const AUTHORITY_ENDS: &[u8] = b"/?#";

/// The longest literal (three bytes or more) of a pattern of the form
/// `^https?:\/\/…` that every match holds within the authority: a piece
/// of the top-level concatenation after the scheme, with no piece before
/// it able to match past the authority.
pub(super) fn authority_literal(pattern: &str) -> Option<Vec<u8>> {
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
pub(super) fn label_start_literal(pattern: &str) -> Option<Vec<u8>> {
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
pub(super) fn parse_pattern(pattern: &str) -> Option<Hir> {
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
pub(super) fn required_literal(pattern: &str) -> Option<Vec<u8>> {
    required_literal_besides(pattern, None)
}

/// The same, leaving out `known` too (a literal the URI is known to hold).
pub(super) fn required_literal_besides(pattern: &str, known: Option<&[u8]>) -> Option<Vec<u8>> {
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
