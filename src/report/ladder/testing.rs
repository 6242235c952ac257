//! What the ladder's unit tests share: small hand-made inputs, and the
//! report of them. It knows nothing a pass does.

use std::io::Write;

use super::{Options, Report, run};
use crate::line::Columns;
use crate::line::crawl_index::IndexFormat;
use crate::pipeline::Unwatched;
use crate::pipeline::input::{Input, MmapChoice};

/// Nine lines: spellings of `http://a.com/x` each RFC rung merges (case,
/// percent-encoding, the default port), a `www.` one only a protocol step
/// merges, a blank line and a line that is no URI.
pub(super) const LINES: &str = "http://a.com/x\n\
    HTTP://a.com/x\n\
    http://a.com/%7Ex\n\
    http://a.com/~x\n\
    http://a.com:80/x\n\
    \n\
    http://b.org\n\
    not a uri\n\
    http://www.a.com/x\n";

/// A crawl index of `url<TAB>digest` lines: one pair the syntax rung
/// rightly merges (D1), one only `strip-www` merges (D2), one it merges
/// wrongly (D3, D4), a line with no digest and a capture with no URI.
pub(super) const INDEX: &str = "http://a.com/x\tD1\n\
    HTTP://a.com/x\tD1\n\
    http://a.com/y\tD2\n\
    http://www.a.com/y\tD2\n\
    http://www.a.com/z\tD3\n\
    http://a.com/z\tD4\n\
    http://a.com/gone\n\
    not a uri\tD5\n";

/// `text` as an input read whole (as a mapped file is: lines in place).
pub(super) fn input(text: &str) -> Input {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    file.write_all(text.as_bytes()).expect("written");
    let path = file.path().to_str().expect("a UTF-8 path").to_string();
    // Read whole, so the file may go.
    Input::open(&path, MmapChoice::never()).expect("opened")
}

/// The report of `text` with `options`.
pub(super) fn report_of(text: &str, options: &Options) -> Report {
    run(&[input(text)], options, &Unwatched).expect("the report runs")
}

/// The options that read [`INDEX`]: the URI in the first column, the
/// digest in the second.
pub(super) fn index_options() -> Options {
    Options {
        columns: tab_separated(0),
        index: Some(IndexFormat::Digest {
            column: 1,
            delimiter: b'\t',
        }),
        ..Options::default()
    }
}

/// Tab-separated lines, the URI in column `field`.
pub(super) fn tab_separated(field: usize) -> Columns {
    Columns {
        field: Some(field),
        delimiter: b'\t',
        ..Columns::default()
    }
}
