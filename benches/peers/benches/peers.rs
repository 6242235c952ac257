//! Throughput of urinorm against other URL/URI crates, on the same lines.
//!
//! Every library gets only the lines that all four accept, and each one's
//! output is copied into a buffer reused across lines, so each does:
//! parse + normalize/serialize + one copy of the result.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use urinorm::normalize::{Normalizer, Rung, Scratch};

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/sample/urls.txt");

fn urinorm_ok(n: &Normalizer, line: &str, out: &mut Vec<u8>) -> bool {
    out.clear();
    n.normalize_into(line.as_bytes(), out, &mut Scratch::default()).is_ok()
}

fn url_ok(line: &str) -> bool {
    url::Url::parse(line).is_ok()
}

fn ada_ok(line: &str) -> bool {
    ada_url::Url::parse(line, None).is_ok()
}

fn fluent_ok(line: &str) -> bool {
    fluent_uri::Uri::parse(line).is_ok()
}

/// The sample's lines that all four libraries accept.
fn lines() -> Vec<String> {
    let text = std::fs::read_to_string(SAMPLE).unwrap_or_else(|e| panic!("{SAMPLE}: {e}"));
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let n = Normalizer::new(Rung::Scheme);
    let mut out = Vec::new();
    let mut total = 0usize;
    let mut rejected = [0usize; 4];
    let mut kept = Vec::new();
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        total += 1;
        let ok = [urinorm_ok(&n, line, &mut out), url_ok(line), ada_ok(line), fluent_ok(line)];
        for (r, ok) in rejected.iter_mut().zip(ok) {
            *r += usize::from(!ok);
        }
        if ok.iter().all(|&b| b) {
            kept.push(line.to_owned());
        }
    }
    eprintln!(
        "peers: {} of {} non-blank lines kept (rejected by urinorm {}, url {}, ada-url {}, fluent-uri {})",
        kept.len(),
        total,
        rejected[0],
        rejected[1],
        rejected[2],
        rejected[3],
    );
    kept
}

fn peers(c: &mut Criterion) {
    let lines = lines();
    let mut g = c.benchmark_group("peers");
    g.throughput(Throughput::Elements(lines.len() as u64));

    g.bench_function("urinorm scheme normalize_into", |b| {
        let n = Normalizer::new(Rung::Scheme);
        let mut out = Vec::with_capacity(4096);
        let mut scratch = Scratch::default();
        b.iter(|| {
            for line in &lines {
                out.clear();
                let changes = n.normalize_into(black_box(line.as_bytes()), &mut out, &mut scratch);
                black_box((&changes, &out));
            }
        })
    });

    g.bench_function("url parse + as_str", |b| {
        let mut out = String::with_capacity(4096);
        b.iter(|| {
            for line in &lines {
                let u = url::Url::parse(black_box(line)).unwrap();
                out.clear();
                out.push_str(u.as_str());
                black_box(&out);
            }
        })
    });

    g.bench_function("ada-url parse + href", |b| {
        let mut out = String::with_capacity(4096);
        b.iter(|| {
            for line in &lines {
                let u = ada_url::Url::parse(black_box(line.as_str()), None).unwrap();
                out.clear();
                out.push_str(u.href());
                black_box(&out);
            }
        })
    });

    g.bench_function("fluent-uri parse + normalize", |b| {
        let mut out = String::with_capacity(4096);
        b.iter(|| {
            for line in &lines {
                let u = fluent_uri::Uri::parse(black_box(line.as_str())).unwrap();
                let norm = u.normalize();
                out.clear();
                out.push_str(norm.as_str());
                black_box(&out);
            }
        })
    });

    g.finish();
}

criterion_group!(benches, peers);
criterion_main!(benches);
