//! `crawl_index`: arbitrary bytes as a line of a CDX file (by the classic
//! layout and by the layout its own header would name), of a CDXJ file and
//! of a digest column, then the digests' judgement of a step over the URLs
//! the bytes make (captures and redirects). No input panics; a record's URI and digest are slices
//! of the line or, for CDXJ, its unescaped JSON; a digest is never empty
//! or `-`; the judgement's pairs hold together (right ≤ merged, right ≤
//! same, false merges ≤ classes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::line::crawl_index::{self, CdxLayout, IndexFormat};
use urinorm::report::evidence::Captures;

fuzz_target!(|data: &[u8]| {
    let header = CdxLayout::from_header(data).and_then(Result::ok);
    for layout in [Some(CdxLayout::CLASSIC), header].into_iter().flatten() {
        for format in [IndexFormat::Cdx, IndexFormat::Cdxj] {
            if let Ok(record) = crawl_index::read(format, layout, data) {
                if let Some(digest) = &record.digest {
                    assert!(!digest.is_empty() && &digest[..] != b"-");
                }
                if let Some(target) = &record.redirect {
                    assert!(!target.is_empty() && &target[..] != b"-");
                }
            }
        }
    }
    let _ = crawl_index::content_digest(Some(data), Some(data), data);
    // Bytes as captures: (own spelling, digest) from pairs of bytes, and a
    // step that keys each spelling by its low bits.
    // A pair whose first byte is odd is a redirect from the second's
    // spelling to the first's.
    let mut captures = Captures::default();
    for pair in data.chunks(2) {
        let own = u128::from(pair[0]) + 1;
        let other = *pair.get(1).unwrap_or(&0);
        match pair[0] % 2 {
            0 => drop(captures.add(own, u64::from(other))),
            _ => captures.add_redirect(u128::from(other) + 1, own, 1),
        }
    }
    let urls = captures.urls();
    let mut made = 0;
    captures.settle_redirects(|_| made += 1);
    let contents = captures.contents();
    assert_eq!(contents.urls(), urls + made);
    let step = contents.judge(|u| contents.own(u) % 7, 3);
    assert!(step.right_pairs <= step.merged_pairs);
    assert!(step.right_pairs <= step.same_pairs);
    assert!(step.false_examples.len() <= 3 && step.missed_examples.len() <= 3);
});
