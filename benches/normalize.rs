//! Nanoseconds per URI for each rung on the shipped sample (the protocol rung
//! with the safe and the aggressive preset), beside the parse-only figure:
//! what one core does before any threading; and the aggressive preset with
//! site rules (testdata/rules/bench-*, made by scripts/make-rules): 500 line
//! rules, a 200-provider ClearURLs file, both.
//!
//! With `URINORM_BENCH_CORPUS=FILE`, also `per_corpus_line`: the scheme rung
//! and the aggressive preset on the first 100,000 lines of FILE (the 14M
//! benchmark corpus, say), as the engine maps each line (the line mapper,
//! which leaves a line already canonical unwritten).

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use urinorm::UriRef;
use urinorm::line::key::KeyFormat;
use urinorm::line::{Columns, NormalizeLines};
use urinorm::normalize::protocol::{PRESETS, Protocol};
use urinorm::normalize::{Normalizer, Rung, Scratch};
use urinorm::pipeline::LineMapper;
use urinorm::pipeline::input::lines;
use urinorm::rules::{RulesFormat, RulesText, SiteRules};
use urinorm::scratch::Slot;

fn sample() -> Vec<Vec<u8>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/sample/urls.txt");
    let bytes = std::fs::read(path).expect("testdata/sample/urls.txt");
    lines(&bytes).map(|(_, line)| line.to_vec()).collect()
}

fn rungs(c: &mut Criterion) {
    let lines = sample();
    let mut group = c.benchmark_group("per_uri");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| {
            lines
                .iter()
                .filter(|l| UriRef::parse_bytes(black_box(l)).is_ok())
                .count()
        })
    });
    let aggressive = Normalizer::with_protocol(Protocol::from(PRESETS[1]));
    let normalizers = Rung::ALL
        .map(|rung| (rung.name().to_string(), Normalizer::new(rung)))
        .into_iter()
        .chain([("protocol-aggressive".to_string(), aggressive)]);
    for (name, normalizer) in normalizers {
        bench_normalizer(&mut group, &name, &normalizer, &lines);
    }
    group.finish();
}

fn bench_normalizer(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    normalizer: &Normalizer,
    lines: &[Vec<u8>],
) {
    let mut out = Vec::with_capacity(4096);
    let mut scratch = Scratch::default();
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut accepted = 0;
            for line in lines {
                out.clear();
                accepted += usize::from(
                    normalizer
                        .normalize_into(black_box(line), &mut out, &mut scratch)
                        .is_ok(),
                );
            }
            accepted
        })
    });
}

fn rules_file(name: &str, format: RulesFormat) -> RulesText {
    let path = format!("{}/testdata/rules/{name}", env!("CARGO_MANIFEST_DIR"));
    RulesText {
        text: std::fs::read_to_string(&path).expect("testdata/rules (scripts/make-rules)"),
        name: path,
        format,
    }
}

fn site_rules(c: &mut Criterion) {
    let lines = sample();
    let mut group = c.benchmark_group("site_rules");
    group.throughput(Throughput::Elements(lines.len() as u64));
    let aggressive = Normalizer::with_protocol(Protocol::from(PRESETS[1]));
    let lines_500 = rules_file("bench-500.rules", RulesFormat::Lines);
    let clearurls_200 = rules_file("bench-clearurls.json", RulesFormat::ClearUrls);
    let with = |texts: &[RulesText]| {
        aggressive.clone().with_rules(
            SiteRules::compile(texts)
                .expect("the benchmark rules compile")
                .into_rewrite(),
        )
    };
    let cases = [
        ("aggressive", aggressive.clone()),
        (
            "aggressive+500-rules",
            with(std::slice::from_ref(&lines_500)),
        ),
        (
            "aggressive+clearurls-200",
            with(std::slice::from_ref(&clearurls_200)),
        ),
        (
            "aggressive+both",
            with(&[clearurls_200.clone(), lines_500.clone()]),
        ),
    ];
    for (name, normalizer) in &cases {
        bench_normalizer(&mut group, name, normalizer, &lines);
    }
    group.finish();
}

/// How many of the corpus's lines `per_corpus_line` takes.
const CORPUS_LINES: usize = 100_000;

fn corpus_lines(c: &mut Criterion) {
    let Some(path) = std::env::var_os("URINORM_BENCH_CORPUS") else {
        return;
    };
    let file = std::fs::File::open(&path).expect("URINORM_BENCH_CORPUS names a readable file");
    let lines: Vec<Vec<u8>> = std::io::BufRead::split(std::io::BufReader::new(file), b'\n')
        .take(CORPUS_LINES)
        .map(|line| line.expect("the corpus is readable"))
        .collect();
    let mut group = c.benchmark_group("per_corpus_line");
    group.throughput(Throughput::Elements(lines.len() as u64));
    let normalizers = [
        ("scheme", Normalizer::new(Rung::Scheme)),
        (
            "protocol-aggressive",
            Normalizer::with_protocol(Protocol::from(PRESETS[1])),
        ),
    ];
    for (name, normalizer) in normalizers {
        let mapper = NormalizeLines::new(normalizer, KeyFormat::Canonical, Columns::default());
        let mut out = Vec::with_capacity(1 << 20);
        let mut scratch = Slot::default();
        group.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                lines
                    .iter()
                    .filter(|line| {
                        mapper
                            .map_line(black_box(line), &mut out, &mut scratch)
                            .is_ok()
                    })
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, rungs, site_rules, corpus_lines);
criterion_main!(benches);
