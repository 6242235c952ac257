//! `rules learn`: site rules learned from a crawl index. It reads the
//! index through the pipeline's chunks (CDX, CDXJ or a digest column, as
//! the ladder does), brings each capture of content to the base step's
//! form (a preset), groups the URLs into contents by their digests
//! ([`crate::report::evidence`]; a redirect on its host joins the URL it
//! redirects from to its target's), and proposes the rules the evidence supports
//! ([`crate::rules::learn`]). With a held-out share of the contents, it
//! learns from the rest and applies the rules (through the rules engine,
//! as `--rules` would) to the share it did not learn from.
//!
//! It knows no flags and writes nothing: the command line prints the
//! [`Learning`].

use std::collections::HashMap;
use std::path::PathBuf;

use rayon::prelude::*;

use crate::line::ColumnScratch;
use crate::line::crawl_index::IndexLines;
use crate::normalize::protocol::{Preset, Protocol, Transform};
use crate::normalize::{Normalizer, Scratch};
use crate::pipeline::chunks::{Chunk, Chunks, Line, LineRules};
use crate::pipeline::hash::InMemoryPrints;
use crate::pipeline::input::{Input, total_size};
use crate::pipeline::spill::{Spill, SpillError, Survivor};
use crate::pipeline::{CHUNKS_PER_THREAD, Progress, RunError, thread_pool};
use crate::report::evidence::{Captures, Contents, pairs, share};
use crate::report::ladder::learn_layout;
use crate::rules::learn::{LearnedRule, Support, learn};
use crate::rules::{RulesFormat, RulesText, SiteRules};
use crate::split;

/// What to learn from, and how.
pub struct LearnOptions {
    /// How the lines are read (the index's format and columns).
    pub lines: IndexLines,
    /// The base step: the scheme rung and this preset's transforms.
    pub preset: &'static Preset,
    pub support: Support,
    /// Learn from all contents but this share, and judge the rules on it.
    pub holdout: Option<f64>,
    pub threads: usize,
    pub max_line_bytes: usize,
    /// The first line of each input is a header, not read.
    pub header: bool,
    /// The memory the hosts' parts are learned within, together.
    pub memory_limit: u64,
    /// Where the captures are spilled by host.
    pub temp_dir: PathBuf,
}

/// What was learned, and from what.
#[derive(Debug)]
pub struct Learning {
    /// Lines read: captures of content, other lines (no digest, another
    /// status, headers, blank), and captures rejected.
    pub lines: u64,
    pub captures: u64,
    /// Redirects to a URL of their own host, each joined to its target's
    /// content (a redirect elsewhere is among the other lines).
    pub redirects: u64,
    pub not_content: u64,
    pub rejected: u64,
    /// Distinct URLs (forms at the base step) and the contents they make
    /// (each host's own).
    pub urls: u64,
    pub contents: u64,
    pub rules: Vec<LearnedRule>,
    /// The rules as a file of urinorm's rules format, with their evidence.
    pub text: String,
    /// How the rules did on the held-out share.
    pub held_out: Option<Trial>,
}

/// The rules applied to URLs they were not learned from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trial {
    pub urls: u64,
    /// Pairs of URLs that are one content.
    pub same_pairs: u64,
    /// Pairs the rules give one key, and those of them that are one content.
    pub merged_pairs: u64,
    pub right_pairs: u64,
}

impl Trial {
    /// Adds the figures of a trial on other URLs (other hosts: no pair
    /// spans the two).
    fn add(&mut self, other: Trial) {
        self.urls += other.urls;
        self.same_pairs += other.same_pairs;
        self.merged_pairs += other.merged_pairs;
        self.right_pairs += other.right_pairs;
    }

    /// Right ÷ merged pairs; `None` when the rules merge none.
    pub fn precision(&self) -> Option<f64> {
        share(self.right_pairs, self.merged_pairs)
    }

    /// Right pairs ÷ pairs of one content; `None` when there are none.
    pub fn recall(&self) -> Option<f64> {
        share(self.right_pairs, self.same_pairs)
    }
}

/// One chunk's captures of content in their base forms.
#[derive(Default)]
struct ChunkForms {
    /// Each capture's form followed by its digest's hash (8 bytes, little
    /// endian, never 0), or a redirect's form, a space and its target's
    /// form followed by [`REDIRECT`]: the record a host's part of the
    /// spill holds.
    records: Vec<u8>,
    /// Each capture: its record's span in `records`, its host's hash.
    captures: Vec<(usize, usize, u64)>,
    lines: u64,
    /// Redirects among the captures (not yet known to join a content).
    redirects: u64,
    not_content: u64,
    rejected: u64,
}

/// The hash a redirect's record ends with, where a capture's digest is:
/// no digest's (a digest's hash is odd).
const REDIRECT: u64 = 0;

/// The memory a host's part takes while its rules are learned, per byte of
/// its spilled records: the records, the captures and contents over them,
/// each URL parsed and grouped by host (measured: about 560 bytes a URL,
/// against about 110 bytes a record).
const LEARN_MEMORY_PER_BYTE: u64 = 8;

/// What one part of the hosts gave.
struct Part {
    captures: u64,
    /// Lines of the redirects that joined a content.
    redirects: u64,
    urls: u64,
    contents: u64,
    rules: Vec<LearnedRule>,
    held_out: Option<Trial>,
}

/// Learns rules from `inputs`, telling `progress` the bytes read.
///
/// The captures are read in one pass and spilled by their host (at the
/// base step) to partition files under the temporary directory; then each
/// part of the hosts is learned from on its own, within the memory limit:
/// a run holds at most a part's URLs, however large the index.
pub fn run(
    inputs: &[Input],
    options: &LearnOptions,
    progress: &dyn Progress,
) -> Result<Learning, RunError> {
    let pool = thread_pool(options.threads)?;
    let base = Normalizer::with_protocol(Protocol::from(*options.preset));
    let prints = InMemoryPrints::new();
    let expected = total_size(inputs).unwrap_or(0);
    let mut spill = Spill::create(
        &options.temp_dir,
        expected,
        options.memory_limit,
        LEARN_MEMORY_PER_BYTE,
    )
    .map_err(|e| RunError::Spill(SpillError::creating(&options.temp_dir, e)))?;
    let mut totals = ChunkForms::default();
    let mut chunks = Chunks::new(inputs);
    let batch_len = options.threads * CHUNKS_PER_THREAD;
    loop {
        let batch = chunks.next_batch(batch_len).map_err(RunError::Input)?;
        if batch.is_empty() {
            break;
        }
        for chunk in &batch {
            learn_layout(&options.lines, chunk, inputs)?;
        }
        let bytes: u64 = batch.iter().map(|c| c.input_bytes).sum();
        let read: Vec<ChunkForms> = pool.install(|| {
            batch
                .par_iter()
                .map(|chunk| chunk_forms(chunk, options, &base, &prints))
                .collect()
        });
        for chunk in read {
            totals.lines += chunk.lines;
            totals.redirects += chunk.redirects;
            totals.not_content += chunk.not_content;
            totals.rejected += chunk.rejected;
            for (start, end, host) in chunk.captures {
                spill
                    .push(host, &chunk.records[start..end], None, 0)
                    .map_err(RunError::Spill)?;
            }
        }
        progress.advance(bytes);
    }
    let (parts, _) = spill
        .finish_groups(&pool, options.memory_limit, |records| {
            learn_part(records, options, &base, &prints)
        })
        .map_err(RunError::Spill)?;
    let mut learning = Learning {
        lines: totals.lines,
        captures: 0,
        redirects: 0,
        not_content: totals.not_content + totals.redirects,
        rejected: totals.rejected,
        urls: 0,
        contents: 0,
        rules: Vec::new(),
        text: String::new(),
        held_out: options.holdout.map(|_| Trial::default()),
    };
    for part in parts {
        learning.captures += part.captures - part.redirects;
        learning.redirects += part.redirects;
        learning.not_content -= part.redirects;
        learning.urls += part.urls;
        learning.contents += part.contents;
        learning.rules.extend(part.rules);
        if let (Some(all), Some(trial)) = (&mut learning.held_out, part.held_out) {
            all.add(trial);
        }
    }
    // Each host is in one part, its rules in their order: a stable sort
    // puts the hosts in order as one part would.
    learning.rules.sort_by(|a, b| a.host.cmp(&b.host));
    learning.text = rules_text(&learning.rules, options);
    Ok(learning)
}

/// Learns from the records of one part of the hosts (each distinct
/// (form, digest on its host) once, with its lines), and tries the rules
/// on its held-out share. Contents are each host's own: a host's URLs are
/// one content when they served one digest, or are joined through URLs
/// of the same host (the book, "Choosing a rung").
fn learn_part(
    records: &[Survivor<'_>],
    options: &LearnOptions,
    base: &Normalizer,
    prints: &InMemoryPrints,
) -> Part {
    let mut captures = Captures::default();
    let mut texts: Vec<&str> = Vec::new();
    let mut redirected_from: Vec<&str> = Vec::new();
    let text = |form| std::str::from_utf8(form).expect("forms are ASCII");
    for record in records {
        let (form, digest) = record.key.split_at(record.key.len() - 8);
        let digest = u64::from_le_bytes(digest.try_into().expect("8 bytes"));
        if digest == REDIRECT {
            // Forms hold no space: it parts the redirect from its target.
            let space = memchr::memchr(b' ', form).expect("a redirect's record");
            let (from, target) = (&form[..space], &form[space + 1..]);
            captures.add_redirect(prints.of(from), prints.of(target), record.size);
            redirected_from.push(text(from));
        } else if let (_, true) = captures.add_lines(prints.of(form), digest, record.size) {
            texts.push(text(form));
        }
    }
    let redirects = captures.settle_redirects(|r| texts.push(redirected_from[r]));
    let contents = captures.contents();
    let held = held_out(&contents, &texts, options.holdout, prints);
    let (learn_from, learn_contents): (Vec<&str>, Vec<u32>) = (0..texts.len())
        .filter(|&u| !held[u])
        .map(|u| (texts[u], contents.content(u as u32)))
        .unzip();
    let rules = learn(&learn_from, &learn_contents, options.support);
    let held_out = options.holdout.map(|_| {
        let trial: Vec<(&str, u32)> = (0..texts.len())
            .filter(|&u| held[u])
            .map(|u| (texts[u], contents.content(u as u32)))
            .collect();
        try_rules(&trial, &rules_text(&rules, options), base)
    });
    Part {
        captures: contents.captures(),
        redirects,
        urls: contents.urls() as u64,
        contents: contents.len() as u64,
        rules,
        held_out,
    }
}

/// One chunk's lines read: each capture of content brought to its base
/// form, with its digest and its host's hash.
fn chunk_forms(
    chunk: &Chunk<'_>,
    options: &LearnOptions,
    base: &Normalizer,
    prints: &InMemoryPrints,
) -> ChunkForms {
    let mut out = ChunkForms::default();
    let (mut column_scratch, mut scratch) = (ColumnScratch::default(), Scratch::default());
    let rules = LineRules {
        header: options.header,
        max_line_bytes: options.max_line_bytes,
    };
    for (_, _, line) in chunk.lines(rules) {
        out.lines += 1;
        let text = match line {
            Line::Text(text) if !options.lines.is_header(text) => text,
            Line::TooLong => {
                out.rejected += 1;
                continue;
            }
            _ => {
                out.not_content += 1;
                continue;
            }
        };
        // A line that is no record is no capture of content either.
        let Ok(read) = options.lines.read(text, chunk.source) else {
            out.not_content += 1;
            continue;
        };
        let digest = read.digest.as_deref().map(|d| prints.short(d));
        if digest.is_none() && !read.is_redirect() {
            out.not_content += 1;
            continue;
        }
        let start = out.records.len();
        let formed = options
            .lines
            .with_uri_of(&read, &mut column_scratch, |uri| {
                Ok(base.normalize_into(uri, &mut out.records, &mut scratch)?)
            });
        if formed.is_err() {
            out.records.truncate(start);
            out.rejected += 1;
            continue;
        }
        let host = prints.short(host_of(&out.records[start..]));
        let Some(digest) = digest else {
            // A redirect: its target's form follows, if it has one.
            out.records.push(b' ');
            let target = options
                .lines
                .with_redirect_of(&read, &mut column_scratch, |uri| {
                    Ok(base.normalize_into(uri, &mut out.records, &mut scratch)?)
                });
            if let Some(Ok(_)) = target {
                out.records.extend_from_slice(&REDIRECT.to_le_bytes());
                out.captures.push((start, out.records.len(), host));
                out.redirects += 1;
            } else {
                out.records.truncate(start);
                out.not_content += 1;
            }
            continue;
        };
        // The digest as seen on this host: contents are a host's own, so
        // that the parts the hosts are learned in (which the memory limit
        // decides) change nothing. Odd, so never a redirect's mark.
        let mut on_host = [0u8; 16];
        on_host[..8].copy_from_slice(&host.to_le_bytes());
        on_host[8..].copy_from_slice(&digest.to_le_bytes());
        let digest = prints.short(&on_host) | 1;
        out.records.extend_from_slice(&digest.to_le_bytes());
        out.captures.push((start, out.records.len(), host));
    }
    out
}

/// The host of a base form (empty where it has none), which chooses its
/// part: rules are per host, so a host's URLs are learned from together.
/// The form is valid, so a split finds it without a parse.
fn host_of(form: &[u8]) -> &[u8] {
    split::head(form).host.map_or(&[], |host| &form[host])
}

/// Which URLs are held out: those of the contents whose first URL's hash
/// falls in the share (a content is held out whole, so that no merge is
/// half learned from).
fn held_out(
    contents: &Contents,
    texts: &[&str],
    share: Option<f64>,
    prints: &InMemoryPrints,
) -> Vec<bool> {
    let Some(share) = share else {
        return vec![false; texts.len()];
    };
    let held: Vec<bool> = (0..contents.len() as u32)
        .map(|c| {
            let first = texts[contents.first_url(c) as usize];
            (prints.short(first.as_bytes()) as f64) < share * u64::MAX as f64
        })
        .collect();
    (0..texts.len())
        .map(|u| held[contents.content(u as u32) as usize])
        .collect()
}

/// The rules as a file: what they were learned over, then each rule with
/// its evidence.
fn rules_text(rules: &[LearnedRule], options: &LearnOptions) -> String {
    let www_stripped = strips_www(options.preset);
    let mut text = format!(
        "# Learned by `urinorm rules learn` over --preset {0}: hosts and paths are\n\
         # as it writes them{3}.\n\
         # Each rule merges only URLs that served one content (conflicts: 0),\n\
         # at least {1} URLs over at least {2} distinct values.\n",
        options.preset.name,
        options.support.min_urls,
        options.support.min_values,
        match www_stripped {
            true =>
                " (each host also with `www.`, which it strips, so that a preset keeping it applies them too)",
            false => "",
        }
    );
    for rule in rules {
        text.push('\n');
        text += &rule.lines(www_stripped);
    }
    text
}

/// Whether `preset` drops a leading `www.` label: hosts learned over its
/// forms may have had one.
fn strips_www(preset: &Preset) -> bool {
    preset
        .transforms()
        .any(|t| matches!(t, Transform::StripWww | Transform::StripWwwDigits))
}

/// The rules in `text` applied, over `base`, to `urls` (each with its
/// content): which pairs they join, and whether rightly. The URLs are
/// distinct base forms, so every pair joined is the rules' doing.
fn try_rules(urls: &[(&str, u32)], text: &str, base: &Normalizer) -> Trial {
    let rules = SiteRules::compile(&[RulesText {
        name: "learned".into(),
        format: RulesFormat::Lines,
        text: text.into(),
    }])
    .expect("learned rules compile");
    let with_rules = base.clone().with_rules(rules.into_rewrite());
    let mut classes: HashMap<String, Vec<u32>> = HashMap::new();
    let mut sizes: HashMap<u32, u64> = HashMap::new();
    for &(form, content) in urls {
        *sizes.entry(content).or_default() += 1;
        if let Ok(key) = with_rules.normalize(form) {
            classes.entry(key).or_default().push(content);
        }
    }
    let mut trial = Trial {
        urls: urls.len() as u64,
        same_pairs: sizes.values().map(|&n| pairs(n)).sum(),
        merged_pairs: 0,
        right_pairs: 0,
    };
    for members in classes.values_mut() {
        trial.merged_pairs += pairs(members.len() as u64);
        members.sort_unstable();
        for same in members.chunk_by(|a, b| a == b) {
            trial.right_pairs += pairs(same.len() as u64);
        }
    }
    trial
}
