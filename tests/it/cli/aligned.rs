//! `--aligned` (one output line per input line, for `paste`) and `--header`
//! (a column file's first line passed through).

use crate::common::cli::{accounted, urinorm};
use serde_json::Value;

/// Every kind of line: canonical, changed, blank, rejected, too long, CRLF,
/// and a last line without its newline.
const LINES: &[u8] = b"http://a/\nHTTP://A:80/%7e\n\nnot a uri\nhttp://a/\x01\nhttp://a/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n../rel\r\nhttp://b/";

fn json_stats(args: &[&str], stdin: &[u8]) -> (String, Value) {
    let (run, stats) = accounted(args, stdin);
    (run.stdout, stats)
}

#[test]
fn normalize_aligned_writes_a_line_for_every_line() {
    let (out, stats) = json_stats(&["normalize", "--aligned", "--max-line-bytes", "40"], LINES);
    assert_eq!(
        out, "http://a/\nhttp://a/~\n\n\n\n\n../rel\nhttp://b/\n",
        "one line each, empty for blank and rejected lines"
    );
    assert_eq!(out.lines().count(), LINES.split(|&b| b == b'\n').count());
    assert_eq!(
        (stats["unique"].as_u64(), stats["blank"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(stats["rejected"], 3);
    // Without --aligned, only accepted lines are written.
    let run = urinorm(&["normalize", "--max-line-bytes", "40"], LINES);
    assert_eq!(run.stdout, "http://a/\nhttp://a/~\n../rel\nhttp://b/\n");
}

#[test]
fn resolve_aligned_reads_a_blank_line_as_the_empty_reference() {
    let (out, stats) = json_stats(
        &["resolve", "--base", "http://h/a/b?q", "--aligned"],
        b"c\n\nbad ref\n../d\n",
    );
    // RFC 3986 §5.2.2: the empty reference is the base without its fragment.
    assert_eq!(out, "http://h/a/c\nhttp://h/a/b?q\n\nhttp://h/d\n");
    assert_eq!(
        (stats["blank"].as_u64(), stats["rejected"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn aligned_output_pastes_beside_its_input() {
    let input = b"http://A/\n\nx y\nhttp://b/\n";
    let run = urinorm(&["normalize", "--aligned", "-q"], input);
    let pasted: Vec<String> = std::str::from_utf8(input)
        .unwrap()
        .lines()
        .zip(run.stdout.lines())
        .map(|(a, b)| format!("{a}\t{b}"))
        .collect();
    assert_eq!(
        pasted,
        [
            "http://A/\thttp://a/",
            "\t",
            "x y\t",
            "http://b/\thttp://b/"
        ]
    );
}

#[test]
fn header_lines_pass_through_once_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.tsv");
    let b = dir.path().join("b.tsv");
    std::fs::write(&a, "\u{feff}page\thref\nhttp://a/\tx\nhttp://a/\tX/../x\n").unwrap();
    std::fs::write(&b, "page\thref\nhttp://a/\thttp://a/x\n").unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let columns = ["--field", "2", "--base-field", "1", "--header"];
    let mut args = vec!["dedup"];
    args.extend(columns);
    args.extend([a, b]);
    let (out, stats) = json_stats(&args, b"");
    assert_eq!(out, "page\thref\nhttp://a/\thttp://a/x\npage\thref\n");
    assert_eq!(stats["header"], 2);
    assert_eq!(stats["duplicates"], 2);
    assert_eq!(stats["rejected"], 0, "no header is rejected");
    // Without --header the header lines are rejected (the base is not a URI).
    let run = urinorm(&["dedup", "--field", "2", "--base-field", "1", a, b], b"");
    assert_eq!(run.code, 1);
    // normalize and resolve pass it through too; the ladder leaves it out.
    let run = urinorm(&["normalize", "--header", "-q"], b"url\nHTTP://A/\n");
    assert_eq!(run.stdout, "url\nhttp://a/\n");
    let run = urinorm(
        &["resolve", "--header", "--base", "http://h/", "-q"],
        b"ref\nx\n",
    );
    assert_eq!(run.stdout, "ref\nhttp://h/x\n");
    let run = urinorm(&["ladder", "--header", "--json"], b"url\nhttp://a/\n");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!((report["lines"].as_u64(), run.code), (Some(1), 0));
}
