//! Hostile input, run through the built binary: every case finishes, with
//! the right counts and no panic. (How the time grows with the input size is
//! measured in `benches/hostile.rs`, never asserted here.)

use crate::common::cli::urinorm;
use serde_json::Value;

/// Runs `dedup` on `input` with `--stats`; checks exit code 0 or 1, no panic,
/// and read = unique + duplicates + rejected + blank. Returns the stats.
fn survives(input: &[u8], extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let stats_path = dir.path().join("stats.json");
    let input_path = dir.path().join("input");
    std::fs::write(&input_path, input).unwrap();
    let mut args = vec![
        "dedup",
        "--quiet",
        "--stats",
        stats_path.to_str().unwrap(),
        input_path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = urinorm(&args, b"");
    assert!(
        run.code == 0 || run.code == 1,
        "exit {}: {}",
        run.code,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(&stats_path).unwrap()).unwrap();
    let n = |k: &str| stats[k].as_u64().unwrap();
    assert_eq!(
        n("lines"),
        n("unique") + n("duplicates") + n("rejected") + n("blank")
    );
    assert_eq!(run.stdout.lines().count() as u64, n("unique"));
    stats
}

fn reason(stats: &Value, reason: &str) -> u64 {
    stats["rejected_by_reason"][reason].as_u64().unwrap_or(0)
}

#[test]
fn a_megabyte_long_single_line() {
    let mut line = b"http://example.com/".to_vec();
    line.extend(std::iter::repeat_n(b'a', 1 << 20));
    let stats = survives(&line, &["--max-line-bytes", "2000000"]);
    assert_eq!(stats["unique"].as_u64(), Some(1));
}

#[test]
fn a_hundred_thousand_dot_dot_segments() {
    let mut line = b"http://example.com".to_vec();
    for _ in 0..100_000 {
        line.extend_from_slice(b"/..");
    }
    line.extend_from_slice(b"/x\n");
    let stats = survives(&line, &["--max-line-bytes", "1000000", "--rung", "syntax"]);
    assert_eq!(stats["unique"].as_u64(), Some(1));
    let run = urinorm(
        &["normalize", "--quiet", "--max-line-bytes", "1000000"],
        &line,
    );
    assert_eq!(run.stdout, "http://example.com/x\n");
}

#[test]
fn ten_thousand_nested_percent_25() {
    let mut line = b"http://example.com/".to_vec();
    for _ in 0..10_000 {
        line.extend_from_slice(b"%25");
    }
    line.push(b'\n');
    let run = urinorm(&["normalize", "--quiet"], &line);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.len(),
        line.len(),
        "%25 stays encoded, once per level"
    );
    survives(&line, &[]);
}

#[test]
fn percent_nul_invalid_utf8_and_lone_cr() {
    let input = b"%\n%%%\nhttp://a/\0\nhttp://a/\xff\xfe\nhttp://a/\rb\nhttp://a/ok\r\n";
    let stats = survives(input, &[]);
    assert_eq!(stats["rejected"].as_u64(), Some(5));
    assert_eq!(stats["unique"].as_u64(), Some(1));
    assert_eq!(reason(&stats, "invalid percent-encoding"), 2);
    assert_eq!(
        reason(&stats, "control character is not allowed in a URI"),
        2
    );
    assert_eq!(reason(&stats, "non-ASCII byte is not allowed in a URI"), 1);
}

#[test]
fn huge_port_many_ipv6_groups_and_colons() {
    let mut input = b"http://a:2147483648/\nhttp://a:99999999999999999999999/\n".to_vec();
    input.extend_from_slice(format!("http://[{}]/\n", vec!["1"; 100].join(":")).as_bytes());
    input.extend_from_slice(format!("http://a{}/\n", ":".repeat(10_000)).as_bytes());
    let stats = survives(&input, &[]);
    assert_eq!(reason(&stats, "port is out of range (0 to 65535)"), 2);
    assert_eq!(reason(&stats, "invalid IPv6 address"), 1);
    assert_eq!(reason(&stats, "port is not a number"), 1);
    // The syntax rung sets no bound on ports (§3.2.3): kept there.
    let stats = survives(&input, &["--rung", "syntax"]);
    assert_eq!(stats["unique"].as_u64(), Some(2));
}

#[test]
fn ten_megabytes_without_a_newline() {
    let mut input = Vec::new();
    while input.len() < 10 << 20 {
        input.extend_from_slice(b"abcdefghij");
    }
    let stats = survives(&input, &[]);
    assert_eq!(
        (stats["lines"].as_u64(), stats["rejected"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        reason(&stats, "line longer than the maximum line length"),
        1
    );
    let stats = survives(&input, &["--max-line-bytes", "20000000"]);
    assert_eq!(
        stats["unique"].as_u64(),
        Some(1),
        "a 10 MB relative reference of letters is valid"
    );
}

#[test]
fn empty_file_and_only_newlines() {
    let stats = survives(b"", &[]);
    assert_eq!(stats["lines"].as_u64(), Some(0));
    let stats = survives(&b"\n".repeat(100_000), &[]);
    assert_eq!(stats["blank"].as_u64(), Some(100_000));
}

#[test]
fn protocol_rung_on_hostile_paths() {
    let mut line = b"http://www.example.com/".to_vec();
    for _ in 0..2_000 {
        line.extend_from_slice(
            b";jsessionid=0123456789abcdef0123/(S(abcdefghijklmnopqrstuvwx))//index.html/",
        );
    }
    line.push(b'\n');
    let stats = survives(
        &line,
        &["--preset", "aggressive", "--max-line-bytes", "1000000"],
    );
    assert_eq!(stats["unique"].as_u64(), Some(1));
}

#[test]
fn a_binary_file_contributes_no_lines_unless_read_as_text() {
    let dir = tempfile::tempdir().unwrap();
    // An ELF header, then bytes that split into line-like pieces: some
    // would pass as relative references.
    let mut elf = b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\n".to_vec();
    for i in 0..200u32 {
        elf.extend_from_slice(&i.to_le_bytes());
        elf.extend_from_slice(b"\x00\x01/lib64/ld-linux.so\n\x00\x02\nend\n\x00\x03\nfi\n");
    }
    let elf_path = dir.path().join("a.out");
    std::fs::write(&elf_path, &elf).unwrap();
    let elf_lines = elf.iter().filter(|&&b| b == b'\n').count() as u64;
    let list = crate::common::testdata("sample/urls.txt");
    let stats = dir.path().join("stats.json");
    let (list, elf_name, stats_name) = (
        list.to_str().unwrap(),
        elf_path.to_str().unwrap(),
        stats.to_str().unwrap(),
    );
    let alone = urinorm(&["dedup", list], b"");
    let run = urinorm(&["dedup", "--stats", stats_name, list, elf_name], b"");
    // None of its lines was used: exit 1, as for rejected lines, so that a
    // cron job notices.
    assert_eq!(run.code, 1, "{}", run.stderr);
    // Only the list's lines are written, and nothing of the binary file
    // is reported as a rejected line.
    assert_eq!(run.stdout, alone.stdout);
    assert!(!run.stderr.contains("ld-linux"), "{}", run.stderr);
    let binary_lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("looks like a binary file"))
        .collect();
    assert_eq!(binary_lines.len(), 1, "{}", run.stderr);
    assert!(binary_lines[0].contains("a.out"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("+ {elf_lines} in binary files")),
        "{}",
        run.stderr
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(json["binary_inputs"], serde_json::json!([elf_name]));
    assert_eq!(json["binary_lines"].as_u64(), Some(elf_lines));
    // Each of its lines has a verdict, and is never admitted to a store.
    let verdicts = urinorm(&["dedup", "--emit", "verdict", elf_name], b"");
    assert_eq!(verdicts.stdout.lines().count() as u64, elf_lines);
    assert!(
        verdicts.stdout.lines().all(|l| l == "binary"),
        "{}",
        verdicts.stdout
    );
    // --text reads it as lines, as grep's does.
    let text = urinorm(&["dedup", "--text", elf_name], b"");
    assert!(text.stdout.lines().any(|l| l == "end"), "{}", text.stdout);
    assert!(!text.stderr.contains("binary"), "{}", text.stderr);
    // A NUL inside a URL list's first 64 KiB: the file is skipped, exit 1.
    let nul = dir.path().join("b.txt");
    std::fs::write(&nul, b"http://exa\0mple.com/\nhttp://ok.example/\n").unwrap();
    let skipped = urinorm(&["dedup", nul.to_str().unwrap()], b"");
    assert_eq!(skipped.code, 1, "{}", skipped.stderr);
    assert!(
        skipped.stderr.contains("looks like a binary file"),
        "{}",
        skipped.stderr
    );
    // A list of URIs, even with some bad lines, is not binary.
    let run = urinorm(&["dedup", "-o", "/dev/null", list], b"");
    assert!(!run.stderr.contains("binary"), "{}", run.stderr);
}

#[test]
fn a_text_file_of_no_uris_is_read_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "a b c\n%zz\nx y\n[::1\nhttp://a b/\n").unwrap();
    let run = urinorm(&["dedup", path.to_str().unwrap()], b"");
    assert!(
        run.stderr.contains("does not look like a list of URIs"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("binary"), "{}", run.stderr);
}
