//! Only fetchable URIs feed a frontier: a relative reference (RFC 3986
//! §4.2) or an http(s) URI without a host (RFC 9110 §4.2.1) is rejected
//! with its reason where a seen store is fed or a key needs a host, and
//! kept by a plain run unless `--fetchable` asks.

use crate::common::cli::{accounted, store_keys, urinorm};

/// Lines that are URI references no crawler can fetch.
const UNFETCHABLE: &[u8] = b"foo\nwww.example.com/\n../x\nhttps://\nhttp:foo\n";

#[test]
fn a_seen_store_takes_only_fetchable_uris() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").display().to_string();
    let mut lines = UNFETCHABLE.to_vec();
    lines.extend_from_slice(b"http://ok.example/\nmailto:a@example.com\n");
    let (run, stats) = accounted(
        &[
            "dedup", "--preset", "safe", "--seen", &store, "--emit", "verdict",
        ],
        &lines,
    );
    let verdicts: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(verdicts.len(), 7);
    for verdict in &verdicts[..3] {
        assert!(
            verdict.starts_with("rejected\ta relative reference"),
            "{verdict}"
        );
    }
    for verdict in &verdicts[3..5] {
        assert!(
            verdict.contains("without a host cannot be fetched (RFC 9110"),
            "{verdict}"
        );
    }
    // And what no crawler fetches (RFC 3986 §3.1: a scheme of its own).
    assert_eq!(verdicts[5], "new\thttp://ok.example/");
    assert!(
        verdicts[6].starts_with("rejected\ta URI of a scheme no crawler fetches"),
        "{}",
        verdicts[6]
    );
    assert_eq!(stats["rejected"], 6);
    assert_eq!(store_keys(&store), 1);
    // Refused URIs are not what makes a file look binary.
    assert!(!run.stderr.contains("binary"), "{}", run.stderr);

    let add = urinorm(
        &["seen", "add", "-q", "--preset", "safe", &store],
        UNFETCHABLE,
    );
    assert_eq!(add.code, 1);
    assert_eq!(store_keys(&store), 1);
    // A scheme filter names what a frontier takes.
    let mail = dir.path().join("m").display().to_string();
    let (kept, _) = accounted(
        &[
            "dedup",
            "-q",
            "--seen",
            &mail,
            "--keep-scheme",
            "mailto",
            "--emit",
            "verdict",
        ],
        b"mailto:a@example.com\nhttp://ok.example/\n",
    );
    assert_eq!(kept.stdout, "new\tmailto:a@example.com\nfiltered\n");
}

#[test]
fn a_plain_run_keeps_them_unless_asked() {
    let (run, _) = accounted(&["dedup", "-q"], UNFETCHABLE);
    assert_eq!(run.stdout.lines().count(), 5, "{}", run.stdout);
    assert!(run.stdout.contains("https:///\n"));
    let (run, stats) = accounted(&["dedup", "-q", "--fetchable"], UNFETCHABLE);
    assert_eq!(
        (run.stdout.as_str(), stats["rejected"].as_u64()),
        ("", Some(5))
    );
    let (run, _) = accounted(
        &["normalize", "-q", "--fetchable=never", "--key", "surt"],
        b"foo\n",
    );
    assert_eq!(run.stdout, "foo\n");
}

#[test]
fn a_key_that_needs_a_host_takes_only_fetchable_uris() {
    let (run, stats) = accounted(
        &["dedup", "-q", "--keep-scheme", "http,https"],
        b"https:///\nhttp:foo\nhttp:///a\nhttp://a/\nftp://f/\n",
    );
    assert_eq!(run.stdout, "http://a/\n");
    assert_eq!(
        (stats["rejected"].as_u64(), stats["filtered"].as_u64()),
        (Some(3), Some(1))
    );
    let (run, stats) = accounted(
        &["normalize", "--preset", "ia", "--key", "surt"],
        b"www.example.com/\nhttp://www.example.com/\n",
    );
    assert_eq!(run.stdout, "com,example)/\n");
    assert_eq!(stats["rejected"], 1);
    for key in ["host", "domain", "surt"] {
        let (run, _) = accounted(&["dedup", "-q", "--key", key], b"../x\nhttp:foo\n");
        assert_eq!(run.stdout, "", "--key {key}");
    }
}
