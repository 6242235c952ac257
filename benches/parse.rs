//! Parse throughput on the shipped sample (`testdata/sample/urls.txt`), in
//! bytes/s and in lines/s.

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use urinorm::UriRef;
use urinorm::pipeline::input::lines;

fn sample() -> Vec<Vec<u8>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/sample/urls.txt");
    let bytes = std::fs::read(path).expect("testdata/sample/urls.txt");
    lines(&bytes).map(|(_, line)| line.to_vec()).collect()
}

fn parse_all(lines: &[Vec<u8>]) -> usize {
    lines
        .iter()
        .filter(|line| UriRef::parse_bytes(black_box(line)).is_ok())
        .count()
}

fn parse(c: &mut Criterion) {
    let lines = sample();
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("sample/bytes", |b| b.iter(|| parse_all(&lines)));
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("sample/lines", |b| b.iter(|| parse_all(&lines)));
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
