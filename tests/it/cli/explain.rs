//! `urinorm explain`: its exit code says what it decided (0 for a URI every
//! rung accepts, 1 for one a rung rejects), never what its text happens to
//! contain.

use crate::common::cli::urinorm;

/// Every 20th line of the shipped sample, the sample's rejected lines, and
/// valid URIs whose text reads like a rejection.
fn cases() -> Vec<String> {
    let sample = std::fs::read_to_string(crate::common::testdata("sample/urls.txt")).unwrap();
    // The file starts with a byte order mark, which input files may have
    // and a URI on the command line does not.
    let sample = sample.trim_start_matches('\u{feff}');
    let lines: Vec<&str> = sample.lines().filter(|l| !l.is_empty()).collect();
    let rejected = urinorm(&["normalize", "--preset", "safe"], sample.as_bytes());
    let rejected_lines: Vec<usize> = rejected
        .stderr
        .lines()
        .filter_map(|l| l.strip_prefix("<stdin>:")?.split(':').next()?.parse().ok())
        .collect();
    assert_eq!(rejected_lines.len(), 17, "{}", rejected.stderr);
    let mut cases: Vec<String> = lines.iter().step_by(20).map(|l| l.to_string()).collect();
    cases.extend(
        rejected_lines
            .iter()
            .map(|&n| sample.lines().nth(n - 1).unwrap().to_string()),
    );
    cases.extend(
        [
            "http://a/rejected:x",
            "rejected:x",
            "http://a/?q=rejected: 1",
            "mailto:rejected:@a",
        ]
        .map(String::from),
    );
    cases
}

#[test]
fn exit_code_is_what_the_rungs_decided() {
    for uri in cases() {
        let accepted = urinorm(
            &["normalize", "--preset", "safe", "--quiet"],
            uri.as_bytes(),
        );
        let expected = accepted.code;
        let run = urinorm(&["explain", &uri], b"");
        assert_eq!(run.code, expected, "explain {uri:?}:\n{}", run.stdout);
        assert_eq!(
            run.stdout.contains("rejected: "),
            expected == 1,
            "{}",
            run.stdout
        );
    }
}
