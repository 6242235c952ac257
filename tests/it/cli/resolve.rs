//! `urinorm resolve` run as a user runs it: files, standard input, exit codes.

use crate::common::cli::urinorm;
use crate::common::tsv_rows;

const BASE: &str = "http://a/b/c/d;p?q";

#[test]
fn resolves_the_rfc_examples_from_a_file() {
    let rows = tsv_rows("conformance/rfc3986_section5.4_examples.tsv");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("refs.txt");
    let refs: Vec<&str> = rows.iter().map(|r| r[2].as_str()).collect();
    // The §5.4 table includes the empty reference, which a line file cannot
    // hold apart from a blank line: blank lines are skipped.
    let (blank, written): (Vec<&str>, Vec<&str>) = refs.iter().partition(|r| r.is_empty());
    std::fs::write(&file, written.join("\n")).unwrap();
    let run = urinorm(&["resolve", "--base", BASE, file.to_str().unwrap()], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected: Vec<&str> = rows
        .iter()
        .filter(|r| !r[2].is_empty())
        .map(|r| r[3].as_str())
        .collect();
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
    assert_eq!(blank.len(), 1);
}

#[test]
fn reads_stdin_with_crlf_and_reports_bad_lines() {
    let run = urinorm(&["resolve", "--base", BASE], b"g\r\n\nbad ref\n../x");
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "http://a/b/c/g\nhttp://a/b/x\n");
    let mut messages = run.stderr.lines();
    assert_eq!(
        messages.next(),
        Some("<stdin>:3: space is not allowed in a URI at byte 3")
    );
    assert!(
        messages
            .next()
            .unwrap()
            .starts_with("urinorm: 4 lines read = 2 written + 1 rejected + 1 blank")
    );
}

#[test]
fn non_strict_reading_is_an_option() {
    let strict = urinorm(&["resolve", "--base", BASE], b"http:g\n");
    assert_eq!(strict.stdout, "http:g\n");
    let lax = urinorm(&["resolve", "--non-strict", "--base", BASE], b"http:g\n");
    assert_eq!(lax.stdout, "http://a/b/c/g\n");
}

#[test]
fn usage_and_io_errors_exit_2_with_a_sentence() {
    let relative = urinorm(&["resolve", "--base", "/a/b"], b"");
    assert_eq!(relative.code, 2);
    assert_eq!(
        relative.stderr.trim(),
        "urinorm: the base '/a/b' has no scheme (RFC 3986 §5.1)"
    );

    let invalid = urinorm(&["resolve", "--base", "http://a/%"], b"");
    assert_eq!(invalid.code, 2);
    assert!(
        invalid
            .stderr
            .contains("invalid percent-encoding at byte 9"),
        "{}",
        invalid.stderr
    );

    let missing = urinorm(&["resolve", "--base", BASE, "/no/such/file.txt"], b"");
    assert_eq!(missing.code, 2);
    assert_eq!(
        missing.stderr.trim(),
        "urinorm: cannot read '/no/such/file.txt': no such file"
    );

    let dir = tempfile::tempdir().unwrap();
    let directory = urinorm(
        &["resolve", "--base", BASE, dir.path().to_str().unwrap()],
        b"",
    );
    assert_eq!(directory.code, 2);
    assert!(
        directory.stderr.contains("is a directory"),
        "{}",
        directory.stderr
    );

    let no_base = urinorm(&["resolve"], b"");
    assert_eq!(no_base.code, 2);
    assert!(!no_base.stderr.contains("panicked"));
}
