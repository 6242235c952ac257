//! A crawl index's evidence: the captures of content the first pass met,
//! each captured URL's key at every step (from the first pass's
//! fingerprints and the second pass's images of its scheme class), and
//! each step's and transform's judgement by the digests, with its examples
//! named by spelling and digest.
//!
//! It knows the passes' tables and how a step's keys are read from them;
//! the judging itself is [`crate::report::evidence`]'s, which knows
//! nothing of lines.

use std::collections::HashMap;

use rayon::prelude::*;

use super::chunk_prints::ChunkPrints;
use super::classes::{Print, REJECTED};
use super::lines::{LineStore, Reading};
use super::protocol_pass::{CLASS_RUN, ProtocolPrints, SchemeClass, SchemePass};
use super::steps::RFC_RUNGS;
use super::{
    Capture, Evidence, EvidenceSummary, FalseExample, MissedExample, StepReport, TransformMerges,
};
use crate::pipeline::hash::PrintHasher;
use crate::pipeline::place::Place;
use crate::report::evidence::{Captures, Contents, Keyed, Level, MissedMerge, UrlId};
use crate::uri::mask_password;

/// Judges every step (`reports`) and every transform alone (`attribution`)
/// by the digests of the captures in `table`, setting their evidence; the
/// summary of what the index held.
pub(super) fn judge(
    table: CaptureTable,
    second: &SchemePass,
    reading: &Reading<'_, '_>,
    reports: &mut [StepReport],
    attribution: &mut [TransformMerges],
) -> EvidenceSummary {
    let keys = UrlKeys::new(table, &second.classes, &second.worked);
    let judged: Vec<Judged> = (0..reports.len())
        .map(|s| match s.checked_sub(RFC_RUNGS.len()) {
            None => Judged::Rung(s),
            Some(p) => Judged::Protocol(p),
        })
        .chain((0..attribution.len()).map(Judged::Single))
        .collect();
    let mut judgements: Vec<Evidence> = judged
        .par_iter()
        .map(|&j| keys.evidence(j, reading, reading.options.examples))
        .collect();
    for (row, evidence) in attribution
        .iter_mut()
        .zip(judgements.split_off(reports.len()))
    {
        row.evidence = Some(evidence);
    }
    for (report, evidence) in reports.iter_mut().zip(judgements) {
        report.evidence = Some(evidence);
    }
    keys.summary()
}

/// The captures of content the first pass met in a crawl index, with what
/// the report needs of each URL.
#[derive(Default)]
pub(super) struct CaptureTable {
    pub(super) captures: Captures,
    /// Each URL's fingerprints at the syntax and the scheme rungs.
    rungs: Vec<[Print; 2]>,
    /// Each URL's first line.
    first: Vec<Place>,
    lines: LineStore,
    /// Lines that are no capture of content (not 2xx, no digest), but for
    /// the redirects settled.
    not_content: u64,
    /// Captures of content the scheme rung rejects: not judged.
    rejected: u64,
    /// Each redirect met, as a URL would be kept if it made one.
    pending: Vec<PendingUrl>,
    /// The lines of the redirects that joined their target's content.
    redirects: u64,
}

/// What a redirect's line would make a URL: its fingerprints at the
/// syntax and the scheme rungs, and its place.
struct PendingUrl {
    rungs: [Print; 2],
    first: Place,
}

impl CaptureTable {
    /// Takes one chunk's lines, in input order: its captures, and the
    /// spellings of the rest (counting those the string rung rejects).
    pub(super) fn count(&mut self, chunk: &ChunkPrints<'_>, string_rejected: &mut u64) {
        let mut redirects = chunk.redirects.iter().peekable();
        for (i, &digest) in chunk.digests.iter().enumerate() {
            let [string, syntax, scheme] = [0, 1, 2].map(|r| chunk.prints[r][i]);
            let target = redirects.next_if(|(line, _)| *line as usize == i);
            if digest == 0 {
                self.not_content += 1;
            } else if scheme == REJECTED {
                self.rejected += 1;
            }
            if let Some(&(_, target)) = target.filter(|_| scheme != REJECTED) {
                let line = chunk.line_at(i);
                self.captures.add_redirect(string, target, 1);
                self.pending.push(PendingUrl {
                    rungs: [syntax, scheme],
                    first: line.place,
                });
                if let Some((chunk, bytes)) = line.in_chunk {
                    self.lines.keep(chunk, line.place, bytes);
                }
                continue;
            }
            if digest == 0 || scheme == REJECTED {
                match string {
                    REJECTED => *string_rejected += 1,
                    string => self.captures.add_spelling(string),
                }
                continue;
            }
            if let (_, true) = self.captures.add(string, digest) {
                let line = chunk.line_at(i);
                self.rungs.push([syntax, scheme]);
                self.first.push(line.place);
                if let Some((chunk, bytes)) = line.in_chunk {
                    self.lines.keep(chunk, line.place, bytes);
                }
            }
        }
    }

    /// Settles the redirects met, once every capture is in: each that
    /// joins its target's content is a URL's line, not another line.
    fn settle_redirects(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let (rungs, first) = (&mut self.rungs, &mut self.first);
        self.redirects = self.captures.settle_redirects(|r| {
            rungs.push(pending[r].rungs);
            first.push(pending[r].first);
        });
        self.not_content -= self.redirects;
    }
}

/// How many of a content's URLs (the earliest) the error-page judgement
/// reads.
const ERROR_PAGE_URLS: usize = 1_000;

/// A step the digests judge: an RFC rung, a protocol step (by its place
/// after the rungs), a transform alone.
#[derive(Clone, Copy)]
enum Judged {
    Rung(usize),
    Protocol(usize),
    Single(usize),
}

/// Each captured URL's key at every judged step, from the first pass's
/// fingerprints and the second pass's images of its scheme class; and the
/// two levels the steps are judged from: the URLs (for the RFC rungs) and
/// the scheme rung's classes (for every step built on it).
struct UrlKeys<'w> {
    table: CaptureTable,
    contents: Contents,
    classes: &'w [SchemeClass],
    worked: &'w [ProtocolPrints],
    /// Each URL's scheme class, by its place in the order of first lines.
    class: Vec<u32>,
    urls: Level,
    scheme: Level,
    /// Each scheme class's unit of `scheme`, if it holds a captured URL.
    unit: Vec<u32>,
}

/// A scheme class that holds no captured URL.
const NO_UNIT: u32 = u32::MAX;

impl<'w> UrlKeys<'w> {
    fn new(
        mut table: CaptureTable,
        classes: &'w [SchemeClass],
        worked: &'w [ProtocolPrints],
    ) -> UrlKeys<'w> {
        table.settle_redirects();
        let captures = std::mem::take(&mut table.captures);
        let (class, contents) = rayon::join(
            || {
                let index: HashMap<Print, u32, PrintHasher> = classes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.print, i as u32))
                    .collect();
                let class: Vec<u32> = table
                    .rungs
                    .iter()
                    .map(|[_, scheme]| index[scheme])
                    .collect();
                class
            },
            || captures.contents(),
        );
        let mut unit = vec![NO_UNIT; classes.len()];
        let mut own = Vec::new();
        let unit_of: Vec<u32> = class
            .iter()
            .map(|&c| {
                if unit[c as usize] == NO_UNIT {
                    unit[c as usize] = own.len() as u32;
                    own.push(classes[c as usize].print);
                }
                unit[c as usize]
            })
            .collect();
        let (urls, scheme) = rayon::join(
            || Level::of_urls(&contents),
            || Level::of_classes(&contents, &own, &unit_of),
        );
        UrlKeys {
            urls,
            scheme,
            table,
            contents,
            classes,
            worked,
            class,
            unit,
        }
    }

    fn key(&self, judged: Judged, url: UrlId) -> Print {
        let u = url as usize;
        let class = self.class[u] as usize;
        let (run, i) = (&self.worked[class / CLASS_RUN], class % CLASS_RUN);
        match judged {
            Judged::Rung(0) => self.contents.own(url),
            Judged::Rung(r) => self.table.rungs[u][r - 1],
            Judged::Protocol(p) => run.images[p][i],
            Judged::Single(t) => {
                let changed = &run.alone[t];
                match changed.binary_search_by_key(&(i as u32), |&(c, _)| c) {
                    Ok(k) => changed[k].1,
                    Err(_) => self.table.rungs[u][1],
                }
            }
        }
    }

    /// The level step `judged` is judged from, and the units it changes
    /// there with their keys: URLs for the RFC rungs; for a protocol step
    /// or a transform alone, the scheme classes whose image differs.
    fn changed(&self, judged: Judged) -> (&Level, Vec<Keyed>) {
        // A scheme class's unit, if it holds a captured URL, with its image.
        let unit_with = |c: usize, key: Print| {
            let unit = self.unit[c];
            (unit != NO_UNIT).then_some(Keyed { key, unit })
        };
        let changed = match judged {
            Judged::Rung(0) => return (&self.urls, Vec::new()),
            Judged::Rung(r) => {
                let changed = (0..self.class.len() as UrlId)
                    .map(|u| Keyed {
                        key: self.table.rungs[u as usize][r - 1],
                        unit: u,
                    })
                    .filter(|k| k.key != self.contents.own(k.unit))
                    .collect();
                return (&self.urls, changed);
            }
            Judged::Protocol(p) => self
                .worked
                .iter()
                .enumerate()
                .flat_map(|(w, run)| {
                    run.images[p]
                        .iter()
                        .enumerate()
                        .map(move |(i, &image)| (w * CLASS_RUN + i, image))
                })
                .filter(|&(c, image)| image != self.classes[c].print)
                .filter_map(|(c, image)| unit_with(c, image))
                .collect(),
            Judged::Single(t) => self
                .worked
                .iter()
                .enumerate()
                .flat_map(|(w, run)| {
                    run.alone[t]
                        .iter()
                        .map(move |&(i, print)| (w * CLASS_RUN + i as usize, print))
                })
                .filter_map(|(c, image)| unit_with(c, image))
                .collect(),
        };
        (&self.scheme, changed)
    }

    /// What the digests say of step `judged`, with `n` examples of each kind.
    fn evidence(&self, judged: Judged, reading: &Reading<'_, '_>, n: usize) -> Evidence {
        let (level, changed) = self.changed(judged);
        let counts = level.judge(&self.contents, changed, |u| self.key(judged, u), n);
        let captures = |urls: &[UrlId]| urls.iter().map(|&u| self.capture(u, reading)).collect();
        Evidence {
            false_examples: counts
                .false_examples
                .iter()
                .map(|m| FalseExample {
                    lines: m.lines,
                    contents: m.contents,
                    captures: captures(&m.urls),
                })
                .collect(),
            missed_examples: counts
                .missed_examples
                .iter()
                .map(|m| MissedExample {
                    keys: m.keys,
                    likely_error_page: self.looks_like_an_error_page(m, reading),
                    captures: captures(&m.urls),
                })
                .collect(),
            counts,
        }
    }

    /// Whether missed merge `m` looks like one page served for many URLs,
    /// judged by the spellings of its content's URLs (the first
    /// [`ERROR_PAGE_URLS`]: a page of a million spellings on one path is
    /// not read a million times for each step it is an example of).
    fn looks_like_an_error_page(&self, m: &MissedMerge, reading: &Reading<'_, '_>) -> bool {
        let content = self.contents.content(m.urls[0]);
        let lines = &self.table.lines;
        let urls = self.contents.members_of(content);
        let spellings = (urls[..urls.len().min(ERROR_PAGE_URLS)].iter()).map(|&u| {
            let spelling = reading.spelling(self.table.first[u as usize], lines);
            String::from_utf8_lossy(&spelling).into_owned()
        });
        // Read one by one: the judgement stops at the paths it needs.
        MissedExample::looks_like_an_error_page(m.keys, spellings)
    }

    /// URL `url` as an example shows it: its first capture.
    fn capture(&self, url: UrlId, reading: &Reading<'_, '_>) -> Capture {
        let place = self.table.first[url as usize];
        let lines = &self.table.lines;
        let (source, _) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        let line = lines.line(place, &reading.maps);
        let digest = reading.digest(line, source).unwrap_or_default();
        let shown = |uri: &[u8]| mask_password(&String::from_utf8_lossy(uri));
        Capture {
            spelling: shown(&reading.spelling(place, lines)),
            digest: String::from_utf8_lossy(&digest).into_owned(),
            digests: self.contents.digests(url),
            redirect: reading.redirect(line, source).map(|t| shown(&t)),
        }
    }

    fn summary(&self) -> EvidenceSummary {
        EvidenceSummary {
            captures: self.contents.captures() - self.table.redirects,
            redirects: self.table.redirects,
            not_content: self.table.not_content,
            rejected: self.table.rejected,
            urls: self.contents.urls() as u64,
            contents: self.contents.len() as u64,
            changing: self.contents.changing() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{INDEX, index_options, report_of};
    use super::*;
    use crate::report::evidence::Judgement;

    /// A step's counts: merged and right pairs, false merges and their
    /// lines, missed merges and their extra keys.
    type Counts = (u64, u64, u64, u64, u64, u64);

    fn counts(c: &Judgement) -> Counts {
        (
            c.merged_pairs,
            c.right_pairs,
            c.false_merges,
            c.false_lines,
            c.missed,
            c.missed_keys,
        )
    }

    fn capture(spelling: &str, digest: &str) -> Capture {
        Capture {
            spelling: spelling.into(),
            digest: digest.into(),
            digests: 1,
            redirect: None,
        }
    }

    #[test]
    fn each_step_is_judged_by_the_digests_of_what_it_merges() {
        let report = report_of(INDEX, &index_options());
        let judged: Vec<(&str, Counts)> = (report.steps.iter())
            .map(|s| {
                (
                    s.name.as_str(),
                    counts(&s.evidence.as_ref().unwrap().counts),
                )
            })
            .collect();
        assert_eq!(
            judged,
            [
                ("string", (0, 0, 0, 0, 2, 2)),
                ("syntax", (1, 1, 0, 0, 1, 1)),
                ("scheme", (1, 1, 0, 0, 1, 1)),
                ("protocol:safe", (1, 1, 0, 0, 1, 1)),
                ("protocol:aggressive", (3, 2, 1, 2, 0, 0)),
            ]
        );
        let string = &report.steps[0].evidence.as_ref().unwrap().counts;
        assert_eq!((string.precision(), string.recall()), (None, Some(0.0)));
    }

    #[test]
    fn examples_name_each_url_by_its_spelling_and_first_digest() {
        let report = report_of(INDEX, &index_options());
        let syntax = report.steps[1].evidence.as_ref().unwrap();
        assert_eq!(
            syntax.missed_examples,
            [MissedExample {
                keys: 2,
                captures: vec![
                    capture("http://a.com/y", "D2"),
                    capture("http://www.a.com/y", "D2")
                ],
                likely_error_page: false,
            }]
        );
        let aggressive = report.steps[4].evidence.as_ref().unwrap();
        assert_eq!(
            aggressive.false_examples,
            [FalseExample {
                lines: 2,
                contents: 2,
                captures: vec![
                    capture("http://www.a.com/z", "D3"),
                    capture("http://a.com/z", "D4")
                ],
            }]
        );
    }

    #[test]
    fn a_transform_alone_is_judged_over_the_scheme_rung() {
        let report = report_of(INDEX, &index_options());
        let alone = |name: &str| {
            let row = report
                .attribution
                .iter()
                .find(|t| t.transform.name() == name);
            counts(&row.unwrap().evidence.as_ref().unwrap().counts)
        };
        // strip-www joins D2's spellings rightly and D3 with D4 wrongly.
        assert_eq!(alone("strip-www"), (3, 2, 1, 2, 0, 0));
        // One that changes nothing here is judged as the scheme rung.
        assert_eq!(alone("drop-fragment"), (1, 1, 0, 0, 1, 1));
    }
}
