//! Nanoseconds per URI for each rung on the shipped sample (the protocol rung
//! with the safe and the aggressive preset), beside the parse-only figure:
//! what one core does before any threading.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use urinorm::UriRef;
use urinorm::normalize::protocol::{PRESETS, Protocol};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::pipeline::input::lines;

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
        let mut out = Vec::with_capacity(4096);
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut accepted = 0;
                for line in &lines {
                    out.clear();
                    accepted +=
                        usize::from(normalizer.normalize_into(black_box(line), &mut out).is_ok());
                }
                accepted
            })
        });
    }
    group.finish();
}

criterion_group!(benches, rungs);
criterion_main!(benches);
