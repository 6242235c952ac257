//! `rules learn`: site rules learned from a crawl index. It reads the
//! index through the pipeline's chunks (CDX, CDXJ or a digest column, as
//! the ladder does), brings each capture of content to the base step's
//! form (a preset), groups the URLs into contents by their digests
//! ([`crate::evidence`]), and proposes the rules the evidence supports
//! ([`crate::rules::learn`]). With a held-out share of the contents, it
//! learns from the rest and applies the rules (through the rules engine,
//! as `--rules` would) to the share it did not learn from.
//!
//! It knows no flags and writes nothing: the command line prints the
//! [`Learning`].

use std::collections::HashMap;

use rayon::prelude::*;

use crate::crawl_index::IndexLines;
use crate::evidence::{Captures, Contents, pairs, share};
use crate::ladder_report::learn_layout;
use crate::mapper::ColumnScratch;
use crate::normalize::protocol::{Preset, Protocol};
use crate::normalize::{Normalizer, Scratch};
use crate::pipeline::chunks::{Chunk, Chunks, Line, LineRules};
use crate::pipeline::hash::InMemoryPrints;
use crate::pipeline::input::Input;
use crate::pipeline::{CHUNKS_PER_THREAD, Progress, RunError, thread_pool};
use crate::rules::learn::{LearnedRule, Support, learn};
use crate::rules::{RulesFormat, RulesText, SiteRules};

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
}

/// What was learned, and from what.
#[derive(Debug)]
pub struct Learning {
    /// Lines read: captures of content, other lines (no digest, another
    /// status, headers, blank), and captures rejected.
    pub lines: u64,
    pub captures: u64,
    pub not_content: u64,
    pub rejected: u64,
    /// Distinct URLs (forms at the base step) and the contents they make.
    pub urls: u64,
    pub contents: u64,
    pub rules: Vec<LearnedRule>,
    /// The rules as a file of urinorm's rules format, with their evidence.
    pub text: String,
    /// How the rules did on the held-out share.
    pub held_out: Option<Trial>,
}

/// The rules applied to URLs they were not learned from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trial {
    pub urls: u64,
    /// Pairs of URLs that are one content.
    pub same_pairs: u64,
    /// Pairs the rules give one key, and those of them that are one content.
    pub merged_pairs: u64,
    pub right_pairs: u64,
}

impl Trial {
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
    forms: Vec<u8>,
    /// Each capture: its form's span in `forms`, its digest's hash.
    captures: Vec<(usize, usize, u64)>,
    lines: u64,
    not_content: u64,
    rejected: u64,
}

/// Learns rules from `inputs`, telling `progress` the bytes read.
pub fn run(
    inputs: &[Input],
    options: &LearnOptions,
    progress: &dyn Progress,
) -> Result<Learning, RunError> {
    let pool = thread_pool(options.threads)?;
    let base = Normalizer::with_protocol(Protocol::from(*options.preset));
    let prints = InMemoryPrints::new();
    let mut captures = Captures::default();
    // Each URL's base form, by number.
    let mut forms: Vec<u8> = Vec::new();
    let mut spans: Vec<(usize, usize)> = Vec::new();
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
            totals.not_content += chunk.not_content;
            totals.rejected += chunk.rejected;
            for (start, end, digest) in chunk.captures {
                let form = &chunk.forms[start..end];
                if let (_, true) = captures.add(prints.of(form), digest) {
                    spans.push((forms.len(), forms.len() + form.len()));
                    forms.extend_from_slice(form);
                }
            }
        }
        progress.advance(bytes);
    }
    let contents = captures.contents();
    let texts: Vec<&str> = spans
        .iter()
        .map(|&(start, end)| std::str::from_utf8(&forms[start..end]).expect("forms are ASCII"))
        .collect();
    let held = held_out(&contents, &texts, options.holdout, &prints);
    let (learn_from, learn_contents): (Vec<&str>, Vec<u32>) = (0..texts.len())
        .filter(|&u| !held[u])
        .map(|u| (texts[u], contents.content(u as u32)))
        .unzip();
    let rules = learn(&learn_from, &learn_contents, options.support);
    let text = rules_text(&rules, options);
    let held_out = match options.holdout {
        Some(_) => {
            let trial: Vec<(&str, u32)> = (0..texts.len())
                .filter(|&u| held[u])
                .map(|u| (texts[u], contents.content(u as u32)))
                .collect();
            Some(try_rules(&trial, &text, &base))
        }
        None => None,
    };
    Ok(Learning {
        lines: totals.lines,
        captures: contents.captures(),
        not_content: totals.not_content,
        rejected: totals.rejected,
        urls: contents.urls() as u64,
        contents: contents.len() as u64,
        rules,
        text,
        held_out,
    })
}

/// One chunk's lines read: each capture of content brought to its base form.
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
        let read = options.lines.read(text, chunk.source).ok();
        let Some((read, digest)) = read.and_then(|read| {
            let digest = prints.short(read.digest.as_deref()?);
            Some((read, digest))
        }) else {
            out.not_content += 1;
            continue;
        };
        let start = out.forms.len();
        let formed = options
            .lines
            .with_uri_of(&read, &mut column_scratch, |uri| {
                base.normalize_into(uri, &mut out.forms, &mut scratch)
            });
        match formed {
            Ok(_) => out.captures.push((start, out.forms.len(), digest)),
            Err(_) => {
                out.forms.truncate(start);
                out.rejected += 1;
            }
        }
    }
    out
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
    let mut text = format!(
        "# Learned by `urinorm rules learn` over --preset {0}: apply them with\n\
         # the same preset (hosts and paths are as it writes them).\n\
         # Each rule merges only URLs that served one content (conflicts: 0),\n\
         # at least {1} URLs over at least {2} distinct values.\n",
        options.preset.name, options.support.min_urls, options.support.min_values
    );
    for rule in rules {
        text.push('\n');
        text += &rule.lines();
    }
    text
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
