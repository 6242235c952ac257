//! The first pass's work on one chunk: each line read (a header, blank,
//! binary, or out of the sample is skipped), its URI prepared and parsed
//! once, and fingerprinted at the three RFC rungs; a crawl index's digest
//! hashed beside it.
//!
//! It knows lines, the sample and the rungs' normalizers; nothing of
//! classes, of the order chunks are counted in, or of the protocol steps.

use std::borrow::Cow;
use std::ops::Range;
use std::time::{Duration, Instant};

use super::classes::Print;
use super::lines::{LineAt, Reading};
use crate::line::ColumnScratch;
use crate::line::crawl_index::IndexLine;
use crate::normalize::{Normalizer, Rung, Scratch};
use crate::pipeline::chunks::{Chunk, Line, LineRules};
use crate::pipeline::hash::InMemoryPrints;
use crate::pipeline::place::Place;
use crate::pipeline::{Fault, Rejection};
use crate::uri::UriRef;

/// The per-line fingerprints of one chunk at the three RFC rungs.
pub(super) struct ChunkPrints<'a> {
    pub(super) chunk: Chunk<'a>,
    /// Each line looked at: its span in the chunk (chunks are far below 4 GiB).
    pub(super) lines: Vec<Range<u32>>,
    /// `prints[rung][line]`, in the order of [`RFC_RUNGS`](super::steps::RFC_RUNGS).
    pub(super) prints: [Vec<Print>; 3],
    /// For a crawl index, each line's digest hash; 0 for a line that is no
    /// capture of content.
    pub(super) digests: Vec<u64>,
    /// For a crawl index, the redirects whose target it names: each one's
    /// line (in `lines`) and its target's fingerprint (as a line's at the
    /// string rung).
    pub(super) redirects: Vec<(u32, Print)>,
    /// Why each line the scheme rung rejects was rejected.
    pub(super) rejected_by_reason: Vec<Cow<'static, str>>,
    pub(super) skipped: Skipped,
    pub(super) time: [Duration; 3],
}

/// The lines read and not looked at, by why.
#[derive(Clone, Copy, Default)]
pub(super) struct Skipped {
    pub(super) left_out: u64,
    pub(super) blank: u64,
    pub(super) header: u64,
    pub(super) binary: u64,
}

impl std::ops::AddAssign for Skipped {
    fn add_assign(&mut self, other: Skipped) {
        self.left_out += other.left_out;
        self.blank += other.blank;
        self.header += other.header;
        self.binary += other.binary;
    }
}

/// Whether a URI is in the sample: by a hash of its host without `www.`,
/// so every spelling of a site lands on the same side. A line with no host
/// (rejected, relative, `mailto:`) is sampled by a hash of itself: one
/// hash for all of them would take them all or none.
pub(super) fn sampled(uri: &[u8], fraction: f64, prints: &InMemoryPrints) -> bool {
    let host = UriRef::parse_bytes(uri)
        .ok()
        .and_then(|u| u.host())
        .filter(|host| !host.is_empty())
        .map(str::to_ascii_lowercase);
    let hash = match &host {
        Some(host) => prints.short(host.strip_prefix("www.").unwrap_or(host).as_bytes()),
        None => prints.short(uri),
    };
    (hash as f64) < fraction * u64::MAX as f64
}

/// Fingerprints one chunk's lines at the three RFC rungs, rung by rung (so
/// each is timed once a chunk). Each line is parsed once: the string rung's
/// work is that check. An error names the input whose lines cannot be placed.
pub(super) fn print_chunk<'a>(
    chunk: Chunk<'a>,
    rungs: &[Normalizer; 2],
    reading: &Reading<'_, '_>,
) -> Result<ChunkPrints<'a>, usize> {
    let t0 = Instant::now();
    let options = reading.options;
    // Every line of the chunk can be placed if its end can.
    Place::in_input(chunk.source, chunk.offset + chunk.bytes.len()).map_err(|_| chunk.source)?;
    let plain = reading.lines.is_plain();
    let mut column_scratch = ColumnScratch::default();
    let mut lines = Vec::new();
    let mut digests = Vec::new();
    let mut redirects = Vec::new();
    // The URIs: parsed from the lines as they are read when the lines are
    // the URIs; else prepared (a column, repaired, resolved) into one
    // buffer first, and parsed once it is complete.
    let mut parsed: Vec<Result<UriRef<'_>, Cow<'static, str>>> = Vec::new();
    let mut prepared = Vec::new();
    let mut prepared_spans: Vec<Result<Range<usize>, Cow<'static, str>>> = Vec::new();
    let mut skipped = Skipped::default();
    let rules = LineRules {
        header: options.header,
        max_line_bytes: options.max_line_bytes,
    };
    for (_, at, line) in chunk.lines(rules) {
        let line_bytes = at.of(&chunk.bytes);
        let from = prepared.len();
        // A line too long to read is not known to be content.
        let mut digest_print = 0;
        let mut redirect_print = 0;
        let span = match line {
            Line::Header => {
                skipped.header += 1;
                continue;
            }
            Line::Blank => {
                skipped.blank += 1;
                continue;
            }
            Line::Binary => {
                skipped.binary += 1;
                continue;
            }
            Line::TooLong => Err(Fault::LineTooLong {
                limit: rules.max_line_bytes,
            }
            .reason()),
            Line::Text(line) if reading.lines.is_header(line) => {
                skipped.header += 1;
                continue;
            }
            Line::Text(_) if plain => Ok(0..0),
            Line::Text(line) => {
                // Read once: its URI prepared, its digest hashed (0 marks a
                // line that is no capture of content).
                let read = reading.lines.read(line, chunk.source);
                let digest = read.as_ref().ok().and_then(|r| r.digest.as_deref());
                digest_print = digest.map_or(0, |d| reading.prints.short(d) | 1);
                if let Ok(read) = &read {
                    redirect_print = target_print(read, reading, &mut column_scratch);
                }
                read.and_then(|read| {
                    reading
                        .lines
                        .with_uri_of(&read, &mut column_scratch, |uri| {
                            prepared.extend_from_slice(uri);
                            Ok(())
                        })
                })
                .map(|()| from..prepared.len())
                .map_err(|e| e.reason())
            }
        };
        let line = line_bytes;
        if let Some(fraction) = options.sample {
            let uri = match &span {
                Ok(r) if !plain => &prepared[r.clone()],
                _ => line,
            };
            if !sampled(uri, fraction, &reading.prints) {
                prepared.truncate(from);
                skipped.left_out += 1;
                continue;
            }
        }
        lines.push(at.start..at.start + at.len);
        if options.index.is_some() {
            if redirect_print != 0 {
                redirects.push((lines.len() as u32 - 1, redirect_print));
            }
            digests.push(digest_print);
        }
        if plain {
            parsed.push(span.and_then(|_| parse(line)));
        } else {
            prepared_spans.push(span);
        }
    }
    if !plain {
        parsed = prepared_spans
            .into_iter()
            .map(|span| span.and_then(|r| parse(&prepared[r])))
            .collect();
    }
    let mut rejected_by_reason: Vec<Cow<'static, str>> =
        parsed.iter().filter_map(|uri| uri.clone().err()).collect();
    let string_prints = parsed
        .iter()
        .map(|uri| {
            uri.as_ref()
                .map_or(0, |u| reading.prints.of(u.as_str().as_bytes()))
        })
        .collect();
    let string_time = t0.elapsed();
    let ([syntax, scheme], [syntax_time, scheme_time]) =
        rung_prints(&parsed, rungs, reading, &mut rejected_by_reason);
    drop(parsed);
    Ok(ChunkPrints {
        chunk,
        lines,
        prints: [string_prints, syntax, scheme],
        digests,
        redirects,
        rejected_by_reason,
        skipped,
        time: [string_time, syntax_time, scheme_time],
    })
}

/// The fingerprints of the `parsed` URIs at the syntax and the scheme
/// rungs (`rungs`), 0 for a URI a rung rejects, each rung timed; the
/// reasons the scheme rung rejects URIs are added to `rejected_by_reason`.
fn rung_prints(
    parsed: &[Result<UriRef<'_>, Cow<'static, str>>],
    rungs: &[Normalizer; 2],
    reading: &Reading<'_, '_>,
    rejected_by_reason: &mut Vec<Cow<'static, str>>,
) -> ([Vec<Print>; 2], [Duration; 2]) {
    let (mut out, mut scratch) = (Vec::new(), Scratch::default());
    let mut time = [Duration::ZERO; 2];
    let prints = std::array::from_fn(|r| {
        let t0 = Instant::now();
        let prints = parsed
            .iter()
            .map(|uri| {
                out.clear();
                let normalized = uri
                    .as_ref()
                    .map(|u| rungs[r].normalize_parsed(u, &mut out, &mut scratch));
                match normalized {
                    Ok(Ok(_)) => reading.prints.of(&out),
                    Ok(Err(e)) => {
                        // The scheme rung's rejects hold the syntax rung's.
                        if rungs[r].rung() == Rung::Scheme {
                            rejected_by_reason.push(Rejection::from(e).reason());
                        }
                        0
                    }
                    Err(_) => 0,
                }
            })
            .collect();
        time[r] = t0.elapsed();
        prints
    });
    (prints, time)
}

/// Parses a URI, with the reason it is rejected.
/// The fingerprint of the target a redirect's line names, as a line's at
/// the string rung; 0 for a line that is no redirect, or a target that is
/// no URI.
fn target_print(
    read: &IndexLine<'_>,
    reading: &Reading<'_, '_>,
    scratch: &mut ColumnScratch,
) -> Print {
    let print =
        |target: &[u8]| Ok(parse(target).map_or(0, |t| reading.prints.of(t.as_str().as_bytes())));
    reading
        .lines
        .with_redirect_of(read, scratch, print)
        .and_then(Result::ok)
        .unwrap_or(0)
}

fn parse(uri: &[u8]) -> Result<UriRef<'_>, Cow<'static, str>> {
    UriRef::parse_bytes(uri).map_err(|e| Rejection::from(e).reason())
}

impl<'a> ChunkPrints<'a> {
    /// The `i`th line looked at: its place and bytes.
    pub(super) fn line_at(&self, i: usize) -> LineAt<'_, 'a> {
        let span = self.lines[i].start as usize..self.lines[i].end as usize;
        LineAt {
            place: Place::in_input(self.chunk.source, self.chunk.offset + span.start)
                .expect("the chunk's end was placed"),
            in_chunk: Some((&self.chunk, &self.chunk.bytes[span])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Options;
    use super::super::testing::index_options;
    use super::*;
    use crate::line::crawl_index::IndexLines;
    use crate::pipeline::chunks::ChunkBytes;

    /// The first pass's work on `text`, one chunk of input 0.
    fn printed<'a>(text: &'a str, options: &Options) -> ChunkPrints<'a> {
        let reading = Reading {
            maps: vec![text.as_bytes()],
            options,
            prints: InMemoryPrints::new(),
            lines: IndexLines::new(options.columns.clone(), options.index, 1),
        };
        let chunk = Chunk {
            source: 0,
            offset: 0,
            bytes: ChunkBytes::Borrowed(text.as_bytes()),
            input_bytes: text.len() as u64,
            binary: false,
        };
        let rungs = [Rung::Syntax, Rung::Scheme].map(Normalizer::new);
        print_chunk(chunk, &rungs, &reading).expect("the chunk is placed")
    }

    #[test]
    fn each_line_is_printed_at_each_rung_and_a_reject_is_0_with_its_reason() {
        let chunk = printed("http://a/x\n\nHTTP://a/x\nnot a uri\n", &Options::default());
        assert_eq!(chunk.lines, [0..10, 12..22, 23..32]);
        assert_eq!((chunk.skipped.blank, chunk.skipped.header), (1, 0));
        let [string, syntax, scheme] = &chunk.prints;
        assert_ne!(string[0], string[1]);
        assert_eq!(syntax[0], syntax[1]);
        assert_eq!(scheme[0], scheme[1]);
        assert_eq!([string[2], syntax[2], scheme[2]], [0; 3]);
        assert_eq!(chunk.rejected_by_reason, ["space is not allowed in a URI"]);
        assert!(chunk.digests.is_empty());
        let second = chunk.line_at(1);
        assert_eq!(second.place, Place::in_input(0, 12).unwrap());
        assert_eq!(
            second.in_chunk.map(|(_, bytes)| bytes),
            Some(&b"HTTP://a/x"[..])
        );
    }

    #[test]
    fn a_header_is_skipped_and_an_index_line_without_a_digest_is_0() {
        let options = Options {
            header: true,
            ..index_options()
        };
        let chunk = printed("url\tdigest\nhttp://a/\tD1\nhttp://b/\n", &options);
        assert_eq!((chunk.lines.len(), chunk.skipped.header), (2, 1));
        assert_eq!(chunk.digests[1], 0);
        // A digest's hash is odd: never 0.
        assert_eq!(chunk.digests[0] & 1, 1);
    }

    #[test]
    fn a_sample_keeps_a_sites_spellings_together() {
        let prints = InMemoryPrints::new();
        for fraction in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let a = sampled(b"http://www.a.com/1", fraction, &prints);
            assert_eq!(a, sampled(b"http://A.com/2", fraction, &prints));
        }
        assert!(!sampled(b"http://a.com/", 0.0, &prints));
        assert!(!sampled(b"not a uri", 0.0, &prints));
    }

    #[test]
    fn lines_out_of_the_sample_are_counted_not_printed() {
        let options = Options {
            sample: Some(0.0),
            ..Options::default()
        };
        let chunk = printed("http://a/\nhttp://b/\n\n", &options);
        assert!(chunk.lines.is_empty());
        assert_eq!((chunk.skipped.left_out, chunk.skipped.blank), (2, 1));
    }
}
