//! How normalization time grows with hostile input: long paths, long runs of
//! `%25`, long runs of dot segments, at three sizes each. Time per byte that
//! stays flat across sizes (criterion's throughput) means linear time.

use criterion::{BenchmarkId, Criterion, Throughput, black_box, criterion_group, criterion_main};
use urinorm::normalize::{Normalizer, Rung, Scratch};

fn hostile(c: &mut Criterion) {
    let shapes: [(&str, &[u8]); 4] = [
        ("path", b"/seg"),
        ("percent", b"%25"),
        ("dot-segments", b"/a/.."),
        ("dot-dot", b"/.."),
    ];
    let scheme = Normalizer::new(Rung::Scheme);
    let mut group = c.benchmark_group("hostile");
    for (name, unit) in shapes {
        for repeats in [1_000usize, 10_000, 100_000] {
            let mut line = b"http://example.com".to_vec();
            for _ in 0..repeats {
                line.extend_from_slice(unit);
            }
            group.throughput(Throughput::Bytes(line.len() as u64));
            let mut out = Vec::with_capacity(line.len() * 2);
            let mut scratch = Scratch::default();
            group.bench_with_input(BenchmarkId::new(name, repeats), &line, |b, line| {
                b.iter(|| {
                    out.clear();
                    scheme
                        .normalize_into(black_box(line), &mut out, &mut scratch)
                        .is_ok()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
