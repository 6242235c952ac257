//! The second pass: the scheme rung's classes, one line each in the order
//! of their first lines, through every protocol step (and the site rules),
//! every attributed transform alone and every rules file alone; the hosts
//! of the classes. The steps' classes, sizes and examples are those of
//! going over every line: the protocol steps are functions of the scheme
//! rung's form.
//!
//! It knows the scheme rung's classes and the steps' normalizers; nothing
//! of the lines' columns or chunks (it reads a class's first line through
//! [`Reading`]), nor of the digests.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::classes::{Class, Classes, NO_OTHER, Print, REJECTED};
use super::examples::{examples, merge, spellings};
use super::lines::{LineAt, LineStore, Reading};
use super::steps::{RFC_RUNGS, SingleSteps, Step, step_report};
use super::{StepReport, TransformMerges};
use crate::line::ColumnScratch;
use crate::line::key::Site;
use crate::normalize::protocol::candidates;
use crate::normalize::{Normalizer, Rung, Scratch};
use crate::pipeline::hash::PrintHasher;
use crate::pipeline::place::Place;
use crate::uri::{SchemeHost, UriRef};

/// The second pass over the scheme rung's classes: the classes in the order
/// of their first lines, the lines they refer to, and what the protocol
/// steps and the transforms alone make of them, run by run.
pub(super) struct SchemePass {
    pub(super) classes: Vec<SchemeClass>,
    lines: LineStore,
    pub(super) worked: Vec<ProtocolPrints>,
}

impl SchemePass {
    /// Works the scheme rung's classes (`scheme`) through the protocol
    /// steps `protocols` and what `alone` holds.
    pub(super) fn work(
        scheme: Classes,
        reading: &Reading<'_, '_>,
        protocols: &[Step],
        alone: &SingleSteps,
    ) -> SchemePass {
        let Classes { map, lines } = scheme;
        let classes = in_first_order(map);
        let worked = classes
            .par_chunks(CLASS_RUN)
            .map(|run| protocol_prints(run, &lines, reading, protocols, alone))
            .collect();
        SchemePass {
            classes,
            lines,
            worked,
        }
    }

    /// Appends the protocol steps' lines of the table to `reports` (the RFC
    /// rungs'): every line the scheme rung rejected (`scheme_rejected`) is
    /// rejected at each of them too.
    pub(super) fn protocol_reports(
        &self,
        steps: &[Step],
        scheme_rejected: u64,
        reading: &Reading<'_, '_>,
        reports: &mut Vec<StepReport>,
    ) {
        let protocol_steps = &steps[RFC_RUNGS.len()..];
        let tables: Vec<Classes> = protocol_steps
            .par_iter()
            .enumerate()
            .map(|(p, step)| protocol_classes(&self.classes, &self.worked, p, step))
            .collect();
        for (p, (step, table)) in protocol_steps.iter().zip(tables).enumerate() {
            // Protocol classes refer to the scheme rung's first lines.
            let n = reading.options.examples;
            let examples = examples(&table, &self.lines, reading, step, step.below(steps), n);
            // A line a site rule breaks, or that the step's preset cannot
            // fetch, is rejected at that step.
            let rejected_by_step: u64 = self.worked.iter().map(|w| w.rejected[p]).sum();
            let report = step_report(
                step,
                table.len() as u64,
                scheme_rejected + rejected_by_step,
                self.worked.iter().map(|w| w.time[p]).sum(),
                examples,
                reports,
            );
            reports.push(report);
        }
    }

    /// What each attributed transform merges alone over the scheme rung,
    /// with its largest merges; and how many each rules file merges alone.
    pub(super) fn attribution(
        &self,
        alone: &SingleSteps,
        reading: &Reading<'_, '_>,
    ) -> (Vec<TransformMerges>, Vec<(String, i64)>) {
        let merges: Vec<(i64, Vec<AloneMerge>)> = (0..alone.len())
            .into_par_iter()
            .map(|t| {
                // Rules files are counted, not shown.
                let n = if t < alone.transforms.len() {
                    reading.options.examples
                } else {
                    0
                };
                merged_alone(&self.classes, &self.worked, t, n)
            })
            .collect();
        let (of_transforms, of_rules) = merges.split_at(alone.transforms.len());
        let attribution = alone
            .transforms
            .iter()
            .zip(&alone.singles)
            .zip(of_transforms)
            .map(
                |((&transform, single), (merges, largest))| TransformMerges {
                    transform,
                    merges: *merges,
                    examples: largest
                        .iter()
                        .map(|m| {
                            let spellings = spellings(m.places, &self.lines, reading);
                            let by = vec![transform.name().to_string()];
                            merge(m.size, &spellings, single, by)
                        })
                        .collect(),
                    evidence: None,
                },
            )
            .collect();
        let rules_attribution = reading
            .options
            .rules
            .iter()
            .flat_map(|r| &r.files)
            .map(|(name, _)| name.clone())
            .zip(of_rules.iter().map(|(merges, _)| *merges))
            .collect();
        (attribution, rules_attribution)
    }
}

/// One class of the scheme rung, which the protocol steps start from.
#[derive(Clone, Copy)]
pub(super) struct SchemeClass {
    pub(super) first: Place,
    size: u64,
    pub(super) print: Print,
}

/// How many scheme classes the second pass works as one task.
pub(super) const CLASS_RUN: usize = 4096;

/// What the protocol steps and transforms make of a run of scheme classes.
pub(super) struct ProtocolPrints {
    /// `images[step][class]`: each protocol step's fingerprint.
    pub(super) images: Vec<Vec<Print>>,
    /// `rejected[step]`: the lines a site rule rejected at each protocol step.
    rejected: Vec<u64>,
    /// `alone[transform]`: the classes it changed (by index in the run),
    /// in order, with the fingerprints of their forms.
    pub(super) alone: Vec<Vec<(u32, Print)>>,
    time: Vec<Duration>,
    /// The lines of each host of the run's classes.
    hosts: HostLines,
}

/// Lines by host.
type HostLines = HashMap<Box<[u8]>, u64, ahash::RandomState>;

/// The scheme rung's classes, earliest first line first (places order
/// lines by input, then offset).
fn in_first_order(table: HashMap<Print, Class, PrintHasher>) -> Vec<SchemeClass> {
    let mut classes: Vec<SchemeClass> = table
        .into_iter()
        .map(|(print, class)| SchemeClass {
            first: class.first,
            size: class.size,
            print,
        })
        .collect();
    classes.par_sort_unstable_by_key(|c| c.first);
    classes
}

/// Works a run of scheme classes through every protocol step and every
/// attributed transform alone, from each class's first line.
fn protocol_prints(
    run: &[SchemeClass],
    lines: &LineStore,
    reading: &Reading<'_, '_>,
    protocols: &[Step],
    alone: &SingleSteps,
) -> ProtocolPrints {
    let scheme = Normalizer::new(Rung::Scheme);
    let prints = &reading.prints;
    let (mut column_scratch, mut scratch) = (ColumnScratch::default(), Scratch::default());
    let mut forms = Vec::new();
    let spans: Vec<Range<usize>> = run
        .iter()
        .map(|class| {
            let start = forms.len();
            reading
                .with_uri_at(class.first, lines, &mut column_scratch, |uri| {
                    Ok(scheme.normalize_into(uri, &mut forms, &mut scratch)?)
                })
                .expect("the first pass accepted this line at the scheme rung");
            start..forms.len()
        })
        .collect();
    let parsed: Vec<UriRef<'_>> = spans
        .iter()
        .map(|span| {
            UriRef::parse_bytes(&forms[span.clone()]).expect("canonical forms are valid references")
        })
        .collect();
    let mut out = Vec::new();
    // What `normalizer` makes of class `i`: its fingerprint, or the scheme
    // rung's own when it changes nothing (so no bytes are hashed twice);
    // `Err` when a site rule rejects it, or when it must be `fetchable` and
    // is not.
    let mut image = |normalizer: &Normalizer, fetchable: bool, i: usize| -> Result<Print, ()> {
        out.clear();
        normalizer
            .protocol_form(&parsed[i], &mut out, &mut scratch)
            .map_err(|_| ())?;
        if fetchable {
            SchemeHost::of_valid(&out).fetchable().map_err(|_| ())?;
        }
        Ok(match out != forms[spans[i].clone()] {
            true => prints.of(&out),
            false => run[i].print,
        })
    };
    let mut time = Vec::with_capacity(protocols.len());
    let mut rejected = vec![0; protocols.len()];
    let images = protocols
        .iter()
        .zip(&mut rejected)
        .map(|(step, rejected)| {
            let t0 = Instant::now();
            let images = (0..run.len())
                .map(|i| {
                    image(&step.normalizer, step.fetchable, i).unwrap_or_else(|()| {
                        *rejected += run[i].size;
                        REJECTED
                    })
                })
                .collect();
            time.push(t0.elapsed());
            images
        })
        .collect();
    // Each transform alone, where it may change the form at all; each rules
    // file alone (a class a rule would reject is left out of its count).
    let mut merged = vec![Vec::new(); alone.len()];
    let mut note = |i: usize, t: usize, print: Print| {
        if print != run[i].print {
            merged[t].push((i as u32, print));
        }
    };
    for (i, uri) in parsed.iter().enumerate() {
        for candidate in candidates(uri) {
            let Some(t) = alone.transforms.iter().position(|&t| t == candidate) else {
                continue;
            };
            if let Ok(print) = image(&alone.singles[t], false, i) {
                note(i, t, print);
            }
        }
        for (k, rules) in alone.rules_files.iter().enumerate() {
            if let Ok(print) = image(rules, false, i) {
                note(i, alone.transforms.len() + k, print);
            }
        }
    }
    let alone = merged;
    let mut hosts = HostLines::default();
    for (uri, class) in parsed.iter().zip(run) {
        let Some(host) = Site::Host.of(&SchemeHost::from(uri)) else {
            continue;
        };
        // Most classes' hosts are known: no key is made for them.
        match hosts.get_mut(host) {
            Some(lines) => *lines += class.size,
            None => _ = hosts.insert(host.into(), class.size),
        }
    }
    ProtocolPrints {
        images,
        rejected,
        alone,
        time,
        hosts,
    }
}

/// The classes of protocol step `p` (`step`): the scheme classes merged by
/// their images, in the order of their first lines. Their lines are the
/// scheme rung's (its [`LineStore`]).
fn protocol_classes(
    classes: &[SchemeClass],
    worked: &[ProtocolPrints],
    p: usize,
    step: &Step,
) -> Classes {
    // The protocol step it is compared with, or none for the scheme rung.
    let over = step.over.and_then(|o| o.checked_sub(RFC_RUNGS.len()));
    let mut table = Classes::default();
    for (run, prints) in classes.chunks(CLASS_RUN).zip(worked) {
        for (i, class) in run.iter().enumerate() {
            if prints.images[p][i] == REJECTED {
                continue;
            }
            let below = match over {
                None => class.print,
                Some(o) => prints.images[o][i],
            };
            let line = || LineAt {
                place: class.first,
                in_chunk: None,
            };
            table.absorb(prints.images[p][i], below, class.size, line);
        }
    }
    table
}

/// A merge of scheme classes that one transform (or rules file) makes alone.
struct AloneMerge {
    /// Lines in the merged classes.
    size: u64,
    /// The first lines of its two earliest classes.
    places: [Place; 2],
}

/// How many scheme classes transform `t` alone merges, and its `n` largest
/// merges (largest first, earliest first on a tie). The classes it changes
/// are grouped by the forms they become, each with the class it leaves
/// alone that already has that form, if any: each group of `k` is `k - 1`
/// classes fewer.
fn merged_alone(
    classes: &[SchemeClass],
    worked: &[ProtocolPrints],
    t: usize,
    n: usize,
) -> (i64, Vec<AloneMerge>) {
    struct Group {
        classes: u64,
        size: u64,
        places: [Place; 2],
    }
    let empty = || Group {
        classes: 0,
        size: 0,
        places: [NO_OTHER; 2],
    };
    let mut groups: HashMap<Print, Group, PrintHasher> = worked
        .iter()
        .flat_map(|w| w.alone[t].iter().map(|&(_, print)| (print, empty())))
        .collect();
    // In the classes' order, so that each group's places are its earliest.
    for (run, w) in classes.chunks(CLASS_RUN).zip(worked) {
        let mut changed = w.alone[t].iter().peekable();
        for (i, class) in run.iter().enumerate() {
            let image = match changed.next_if(|(c, _)| *c as usize == i) {
                Some(&(_, print)) => print,
                None => class.print,
            };
            if let Some(group) = groups.get_mut(&image) {
                if let Some(place) = group.places.get_mut(group.classes as usize) {
                    *place = class.first;
                }
                group.classes += 1;
                group.size += class.size;
            }
        }
    }
    let merged = groups.values().map(|g| g.classes as i64 - 1).sum();
    let mut largest: Vec<&Group> = groups.values().filter(|g| g.classes > 1).collect();
    let order = |g: &&Group| (std::cmp::Reverse(g.size), g.places[0]);
    if largest.len() > n {
        largest.select_nth_unstable_by_key(n, order);
        largest.truncate(n);
    }
    largest.sort_unstable_by_key(order);
    let largest = largest
        .into_iter()
        .map(|g| AloneMerge {
            size: g.size,
            places: g.places,
        })
        .collect();
    (merged, largest)
}

/// The distinct hosts and registrable domains of the runs' classes, and
/// the `top` hosts by lines.
pub(super) fn sites(worked: Vec<ProtocolPrints>, top: usize) -> (u64, u64, Vec<(String, u64)>) {
    let mut hosts = HostLines::default();
    for run in worked {
        for (host, lines) in run.hosts {
            *hosts.entry(host).or_default() += lines;
        }
    }
    let list = crate::domain::suffix_list();
    let domains: HashSet<&[u8], ahash::RandomState> = hosts
        .keys()
        .map(|host| list.registrable_domain(host).unwrap_or(host))
        .collect();
    let mut most: Vec<(&[u8], u64)> = hosts.iter().map(|(h, &n)| (&h[..], n)).collect();
    let by_lines = |a: &(&[u8], u64), b: &(&[u8], u64)| b.1.cmp(&a.1).then(a.0.cmp(b.0));
    if most.len() > top && top > 0 {
        most.select_nth_unstable_by(top - 1, by_lines);
    }
    most.truncate(top);
    most.sort_unstable_by(by_lines);
    let top_hosts = most
        .into_iter()
        .map(|(h, n)| (String::from_utf8_lossy(h).into_owned(), n))
        .collect();
    (hosts.len() as u64, domains.len() as u64, top_hosts)
}

#[cfg(test)]
mod tests {
    use super::super::Options;
    use super::super::testing::{LINES, report_of};
    use super::*;

    /// Scheme classes of prints 10, 11, …, of sizes 1, 2, …, their first
    /// lines at offsets 0, 100, ….
    fn classes(n: u128) -> Vec<SchemeClass> {
        (0..n)
            .map(|i| SchemeClass {
                first: Place::in_input(0, 100 * i as usize).unwrap(),
                size: i as u64 + 1,
                print: 10 + i,
            })
            .collect()
    }

    /// One run in which a transform alone changes the classes `changed`
    /// (by index, in order) to the prints given; and the lines of `hosts`.
    fn worked(changed: Vec<(u32, Print)>, hosts: &[(&str, u64)]) -> ProtocolPrints {
        ProtocolPrints {
            images: Vec::new(),
            rejected: Vec::new(),
            alone: vec![changed],
            time: Vec::new(),
            hosts: (hosts.iter())
                .map(|&(host, lines)| (host.as_bytes().into(), lines))
                .collect(),
        }
    }

    #[test]
    fn a_transform_alone_merges_classes_into_the_one_whose_form_they_take() {
        let classes = classes(4);
        // Classes 1 and 2 become class 0's form; class 3 a form of its own.
        let run = [worked(vec![(1, 10), (2, 10), (3, 99)], &[])];
        let (merged, largest) = merged_alone(&classes, &run, 0, 5);
        assert_eq!(merged, 2);
        assert_eq!(largest.len(), 1);
        assert_eq!(largest[0].size, 1 + 2 + 3);
        assert_eq!(largest[0].places, [classes[0].first, classes[1].first]);
        // Counted, not shown.
        let (merged, largest) = merged_alone(&classes, &run, 0, 0);
        assert_eq!((merged, largest.len()), (2, 0));
    }

    #[test]
    fn the_largest_merges_alone_come_first() {
        let classes = classes(5);
        // {0, 1} of 3 lines, {2, 3, 4} of 12.
        let run = [worked(vec![(1, 10), (3, 12), (4, 12)], &[])];
        let (merged, largest) = merged_alone(&classes, &run, 0, 5);
        assert_eq!(merged, 3);
        let sizes: Vec<u64> = largest.iter().map(|m| m.size).collect();
        assert_eq!(sizes, [12, 3]);
    }

    #[test]
    fn the_sites_are_summed_over_runs_and_named_most_lines_first() {
        let runs = vec![
            worked(Vec::new(), &[("a.example.com", 3), ("b.example.com", 1)]),
            worked(Vec::new(), &[("a.example.com", 2), ("other.org", 4)]),
        ];
        let (hosts, domains, top) = sites(runs, 2);
        assert_eq!((hosts, domains), (3, 2));
        assert_eq!(top, [("a.example.com".into(), 5), ("other.org".into(), 4)]);
    }

    #[test]
    fn the_second_pass_finds_each_transforms_merges_with_an_example() {
        let report = report_of(LINES, &Options::default());
        let merging: Vec<(&str, i64)> = (report.attribution.iter())
            .filter(|t| t.merges != 0)
            .map(|t| (t.transform.name(), t.merges))
            .collect();
        assert_eq!(merging, [("strip-www", 1)]);
        let strip_www = report.attribution.iter().find(|t| t.merges != 0).unwrap();
        let example = &strip_www.examples[0];
        assert_eq!((example.size, example.key.as_str()), (4, "http://a.com/x"));
        assert_eq!(example.spellings, ["http://a.com/x", "http://www.a.com/x"]);
        assert_eq!(example.joined_by, ["strip-www"]);
    }
}
