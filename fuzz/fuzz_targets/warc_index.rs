//! `warc_index`: arbitrary bytes as a WARC file (as given, and after a
//! `WARC/1.1` version line, so that the record parser is reached). No input
//! panics; what is read is either refused with a sentence or CDXJ lines,
//! each of which reads back as a CDXJ record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::line::crawl_index::{self, CdxLayout, IndexFormat};
use urinorm::pipeline::warc::index_lines;

fuzz_target!(|data: &[u8]| {
    let versioned = [&b"WARC/1.1\r\n"[..], data].concat();
    for bytes in [data, &versioned[..]] {
        match index_lines(bytes) {
            Err(why) => assert!(!why.is_empty()),
            Ok(lines) => {
                for line in lines.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    let record = crawl_index::read(IndexFormat::Cdxj, CdxLayout::CLASSIC, line);
                    assert!(record.is_ok(), "{}", String::from_utf8_lossy(line));
                }
            }
        }
    }
});
