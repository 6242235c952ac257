//! Rejections count bytes in the user's text: past a lenient repair, the
//! offset is the byte the user wrote, not the repaired one's; in a column
//! file, the reject names the column (or the base column) and counts in it.

use crate::common::cli::urinorm;

/// The reject lines `normalize` writes on standard error for `input` (the
/// summary's lines aside).
fn rejects(args: &[&str], input: &[u8]) -> Vec<String> {
    let mut all = vec!["normalize"];
    all.extend_from_slice(args);
    let run = urinorm(&all, input);
    assert_eq!(run.code, 1, "{}", run.stderr);
    run.stderr
        .lines()
        .filter(|l| !l.starts_with("urinorm:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn lenient_offsets_are_the_users_bytes() {
    // A byte order mark inside the text (not at the start of the input,
    // where it is skipped): percent-encoded it is 9 bytes, written 3; the
    // ':' that makes a relative reference invalid is the user's byte 8.
    let input = b"http://ok/\n\xef\xbb\xbfhttps://x.gov/a\n";
    assert_eq!(
        rejects(&["--lenient"], input),
        [
            "<stdin>:2: ':' in the first segment of a relative path (it would read as a scheme) at byte 8"
        ]
    );
    // Trimmed whitespace and an encoded '<' come before the bad byte: the
    // repair is `%3Chttp://a/b%01c:d`, whose ':' at byte 7 is the user's 8.
    let input = b"   <http://a/b\x01c:d\n";
    assert_eq!(
        rejects(&["--lenient"], input),
        [
            "<stdin>:1: ':' in the first segment of a relative path (it would read as a scheme) at byte 8"
        ]
    );
}

#[test]
fn a_column_reject_names_its_column_and_counts_in_it() {
    let input = b"http://page/\thttp://a b/\n";
    assert_eq!(
        rejects(&["--field", "2"], input),
        [
            "<stdin>:1: field 2: space is not allowed in a URI at byte 8 of the field (--lenient would percent-encode it)"
        ]
    );
    let input = b"http://pa ge/\t../x\n";
    assert_eq!(
        rejects(&["--field", "2", "--base-field", "1"], input),
        ["<stdin>:1: base field 1: space is not allowed in a URI at byte 9 of the field"]
    );
    // Past a resolution, the fault is in the URI the column resolves to.
    let input = b"http://h:99999/\tx\n";
    assert_eq!(
        rejects(&["--field", "2", "--base-field", "1"], input),
        [
            "<stdin>:1: field 2: port is out of range (0 to 65535) at byte 9 of the URI it resolves to"
        ]
    );
    let input = b"http://page/\t\xef\xbb\xbfhttps://x.gov/a\n";
    assert_eq!(
        rejects(&["--field", "2", "--lenient"], input),
        [
            "<stdin>:1: field 2: ':' in the first segment of a relative path (it would read as a scheme) at byte 8 of the field"
        ]
    );
}
