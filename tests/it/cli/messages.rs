//! Messages a user can act on: what a mistake is told, and what quiet
//! leaves out.

use crate::common::cli::{urinorm, with_stats};

/// A URI given where a file of URIs is read is not found as a file: the
/// message says how to give one.
#[test]
fn a_uri_given_as_a_file_gets_a_hint() {
    let run = urinorm(&["normalize", "http://example.com/a"], b"");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read 'http://example.com/a': no such file (the arguments are files of URIs: give a URI on standard input"),
        "{}",
        run.stderr
    );
    let plain = urinorm(&["normalize", "no-such-file.txt"], b"");
    assert!(!plain.stderr.contains("explain"), "{}", plain.stderr);
}

/// `-q` leaves out the summary and each rejected line; they are still
/// counted, and in the exit code.
#[test]
fn quiet_shows_no_rejected_line_and_still_counts_them() {
    let (run, stats) = with_stats(&["normalize", "-q"], b"http://a/\nnot a uri\n");
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (1, "http://a/\n", "")
    );
    assert_eq!(stats["rejected"], 1);
    let loud = urinorm(&["normalize"], b"not a uri\n");
    assert!(
        loud.stderr.contains("<stdin>:1: space is not allowed"),
        "{}",
        loud.stderr
    );
}

/// Compacting a store of one run says there was nothing to merge.
#[test]
fn compacting_one_run_says_nothing_was_merged() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").display().to_string();
    assert_eq!(
        urinorm(&["dedup", "-q", "--seen", &store], b"http://a/\n").code,
        0
    );
    let run = urinorm(&["seen", "compact", &store], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.ends_with("1 keys, in 1 run, nothing to merge\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn an_output_in_a_directory_that_takes_no_files_says_so() {
    // /proc exists, and /proc/version is a file: the directory is there,
    // it only takes no new file.
    let run = urinorm(&["dedup", "-o", "/proc/version"], b"http://a/\n");
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "urinorm: cannot write '/proc/version': no file can be made in '/proc' (no such file or directory)\n"
    );
}

/// A run that cannot hold its keys to --memory-limit says so at its start,
/// with why (and its stats say so too); one that can says nothing of it.
#[test]
fn a_memory_limit_a_run_cannot_keep_is_said_not_ignored() {
    let input = b"http://a/\nhttp://b/\nhttp://a/\n";
    let (run, stats) = with_stats(
        &["dedup", "--emit", "verdict", "--memory-limit", "32M"],
        input,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(
            "urinorm: --memory-limit cannot bound this run: --emit verdict decides each line as it is read"
        ),
        "{}",
        run.stderr
    );
    assert!(stats["memory_unbounded"].is_string(), "{stats:#}");
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let capped = urinorm(
        &[
            "dedup",
            "--max-per-host",
            "5",
            "--seen",
            store.to_str().unwrap(),
            "--memory-limit",
            "32M",
        ],
        input,
    );
    assert!(
        capped
            .stderr
            .contains("cannot bound this run: a seen store consulted batch by batch"),
        "{}",
        capped.stderr
    );
    // Bounded (it spills): nothing said, nothing in the stats.
    let (run, stats) = with_stats(&["dedup", "--memory-limit", "1M"], input);
    assert!(!run.stderr.contains("cannot bound"), "{}", run.stderr);
    assert!(stats.get("memory_unbounded").is_none(), "{stats:#}");
}
