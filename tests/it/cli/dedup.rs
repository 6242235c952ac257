//! `urinorm dedup` and `urinorm normalize` run as a user runs them: real
//! files and standard input, exit codes, and the counting invariant checked
//! from `--stats` on every run.

use std::path::{Path, PathBuf};

use crate::common::cli::{Run, urinorm};
use serde_json::Value;

/// A temporary directory holding the test's files.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }

    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.0.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_string()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

/// Runs `urinorm args… --stats FILE` and checks read = unique + duplicates +
/// rejected + blank. Returns the run and the stats.
fn counted(args: &[&str], stdin: &[u8]) -> (Run, Value) {
    let dir = Dir::new();
    let stats_path = dir.path("stats.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--stats", stats_path.to_str().unwrap()]);
    let run = urinorm(&all, stdin);
    assert!(
        run.code == 0 || run.code == 1,
        "exit {}: {}",
        run.code,
        run.stderr
    );
    let stats: Value =
        serde_json::from_str(&std::fs::read_to_string(&stats_path).unwrap()).unwrap();
    let n = |k: &str| stats[k].as_u64().unwrap();
    assert_eq!(
        n("lines"),
        n("unique") + n("duplicates") + n("rejected") + n("blank"),
        "{stats:#}"
    );
    let by_reason: u64 = stats["rejected_by_reason"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(by_reason, n("rejected"));
    assert_eq!(run.code == 1, n("rejected") > 0);
    (run, stats)
}

const FRONTIER: &[u8] = b"http://Example.com:80/a\nhttp://example.com/b\nHTTP://example.COM/a\nhttp://example.com/%62\nhttps://x.org\n";

#[test]
fn first_occurrence_order_and_the_three_emit_modes() {
    let (run, stats) = counted(&["dedup"], FRONTIER);
    assert_eq!(
        run.stdout,
        "http://example.com/a\nhttp://example.com/b\nhttps://x.org/\n"
    );
    assert_eq!(
        (stats["unique"].as_u64(), stats["duplicates"].as_u64()),
        (Some(3), Some(2))
    );

    let (run, _) = counted(&["dedup", "--emit", "first"], FRONTIER);
    assert_eq!(
        run.stdout,
        "http://Example.com:80/a\nhttp://example.com/b\nhttps://x.org\n"
    );

    let (run, _) = counted(&["dedup", "--emit", "count"], FRONTIER);
    assert_eq!(
        run.stdout,
        "2\thttp://example.com/a\n2\thttp://example.com/b\n1\thttps://x.org/\n"
    );
}

#[test]
fn rungs_choose_how_much_collapses() {
    let lines = |rung: &str| {
        counted(&["dedup", "--rung", rung], FRONTIER)
            .0
            .stdout
            .lines()
            .count()
    };
    assert_eq!(
        (lines("string"), lines("syntax"), lines("scheme")),
        (5, 4, 3)
    );
}

#[test]
fn line_endings_bom_blank_lines_and_no_final_newline() {
    let dir = Dir::new();
    let file = dir.file(
        "in.txt",
        b"\xEF\xBB\xBFhttp://a/\r\n\r\n\nhttp://A/\r\nhttp://b/x",
    );
    let (run, stats) = counted(&["dedup", &file], b"");
    assert_eq!(run.stdout, "http://a/\nhttp://b/x\n");
    assert_eq!(stats["blank"].as_u64(), Some(2));
    assert_eq!(stats["lines"].as_u64(), Some(5));
}

#[test]
fn empty_file_and_file_of_newlines() {
    let dir = Dir::new();
    let (run, stats) = counted(&["dedup", &dir.file("empty.txt", b"")], b"");
    assert_eq!(
        (run.code, run.stdout.as_str(), stats["lines"].as_u64()),
        (0, "", Some(0))
    );
    let (run, stats) = counted(&["dedup", &dir.file("nl.txt", b"\n\n\r\n")], b"");
    assert_eq!(
        (run.stdout.as_str(), stats["blank"].as_u64()),
        ("", Some(3))
    );
}

#[test]
fn invalid_utf8_nul_and_control_bytes_are_rejected_by_line() {
    let input = b"http://a/\nhttp://a/\xff\xfe\nhttp://a/\0x\nhttp://a/\x1b[31m\nhttp://b/\n";
    let (run, stats) = counted(&["dedup", "-"], input);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "http://a/\nhttp://b/\n");
    assert_eq!(stats["rejected"].as_u64(), Some(3));
    assert!(
        run.stderr
            .contains("<stdin>:2: non-ASCII byte is not allowed in a URI at byte 9"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("<stdin>:3: control character"),
        "{}",
        run.stderr
    );
}

#[test]
fn rejects_file_names_file_line_reason_and_raw_bytes() {
    let dir = Dir::new();
    let input = dir.file("in.txt", b"http://a/\nhttp://a b/\n\nhttp://c/%zz\n");
    let rejects = dir.path("rejects.tsv");
    let (run, _) = counted(
        &["dedup", &input, "--rejects", rejects.to_str().unwrap()],
        b"",
    );
    assert_eq!(run.code, 1);
    let report = std::fs::read_to_string(&rejects).unwrap();
    assert_eq!(
        report,
        format!(
            "{input}:2\tspace is not allowed in a URI at byte 8 (--lenient would percent-encode it)\thttp://a b/\n\
             {input}:4\tinvalid percent-encoding at byte 9 (--lenient would write the '%' as %25)\thttp://c/%zz\n"
        )
    );
}

#[test]
fn invalid_pass_keeps_bad_lines_at_the_string_rung() {
    let (run, stats) = counted(
        &["dedup", "--invalid", "pass"],
        b"http://a/\nbad line\nbad line\nHTTP://A/\n",
    );
    assert_eq!(run.code, 0);
    assert_eq!(run.stdout, "http://a/\nbad line\n");
    assert_eq!(
        (stats["passed"].as_u64(), stats["duplicates"].as_u64()),
        (Some(2), Some(2))
    );
}

#[test]
fn a_one_megabyte_line() {
    let mut line = b"http://a/".to_vec();
    line.extend(std::iter::repeat_n(b'x', 1 << 20));
    let mut input = line.clone();
    input.extend_from_slice(b"\nhttp://b/\n");
    input.extend_from_slice(&line);
    // Within the limit: kept, and deduplicated.
    let (run, stats) = counted(&["dedup", "--max-line-bytes", "2000000"], &input);
    assert_eq!(stats["duplicates"].as_u64(), Some(1));
    assert_eq!(run.stdout.len(), line.len() + 1 + "http://b/\n".len());
    // Beyond the default limit: rejected with that reason, never truncated.
    let (run, stats) = counted(&["dedup"], &input);
    assert_eq!(run.stdout, "http://b/\n");
    assert_eq!(
        stats["rejected_by_reason"]["line longer than the maximum line length"].as_u64(),
        Some(2)
    );
}

#[test]
fn same_bytes_for_any_number_of_threads_across_chunk_boundaries() {
    // About 6 MB: several chunks per input, two inputs, many duplicates.
    let mut input = Vec::new();
    for i in 0..120_000u32 {
        input.extend_from_slice(
            format!(
                "HTTP://Host{}.example:80/p/./{}?q={}\n",
                i % 997,
                i % 3001,
                i % 7
            )
            .as_bytes(),
        );
        if i % 1000 == 0 {
            input.extend_from_slice(b"not a uri\n\n");
        }
    }
    let dir = Dir::new();
    let file = dir.file("big.txt", &input);
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        for emit in ["canonical", "first", "count"] {
            let (run, stats) = counted(
                &["dedup", "-j", threads, "--emit", emit, &file, "-"],
                &input,
            );
            assert_eq!(stats["lines"].as_u64(), Some(2 * (120_000 + 2 * 120)));
            outputs.push((emit, run.stdout));
        }
    }
    for (emit, out) in &outputs[3..] {
        let reference = &outputs.iter().find(|(e, _)| e == emit).unwrap().1;
        assert!(
            out == reference,
            "output differs between thread counts for --emit {emit}"
        );
    }
    assert!(outputs[0].1.lines().count() > 10_000);
}

#[test]
fn output_file_appears_only_when_complete() {
    let dir = Dir::new();
    let out = dir.path("out.txt");
    let (run, _) = counted(&["dedup", "-o", out.to_str().unwrap()], FRONTIER);
    assert_eq!(run.stdout, "");
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 3);
    // The output has the permissions of any new file, not a temporary file's.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path("plain.txt");
        std::fs::write(&plain, b"").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode();
        assert_eq!(mode(&out), mode(&plain));
        std::fs::remove_file(&plain).unwrap();
    }
    // A missing input fails before anything is written.
    let missing = dir.path("missing.txt");
    let failed = urinorm(
        &[
            "dedup",
            "-o",
            dir.path("never.txt").to_str().unwrap(),
            missing.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(failed.code, 2);
    assert_eq!(
        failed.stderr.trim(),
        format!("urinorm: cannot read '{}': no such file", missing.display())
    );
    assert!(!dir.path("never.txt").exists());
    let left: Vec<_> = std::fs::read_dir(dir.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["out.txt"], "no temporary file left behind");
}

#[test]
fn io_errors_exit_2_naming_the_path() {
    let dir = Dir::new();
    let run = urinorm(&["dedup", dir.0.path().to_str().unwrap()], b"");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is a directory"), "{}", run.stderr);
    let run = urinorm(&["dedup", "-o", "/nonexistent-dir/out.txt"], FRONTIER);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .starts_with("urinorm: cannot write '/nonexistent-dir/out.txt'"),
        "{}",
        run.stderr
    );
    let run = urinorm(&["dedup", "--rung", "bogus"], b"");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown rung 'bogus'"),
        "{}",
        run.stderr
    );
    if Path::new("/dev/full").exists() {
        let run = urinorm(&["dedup", "-o", "/dev/full"], FRONTIER);
        assert_eq!(run.code, 2, "{}", run.stderr);
    }
}

#[test]
fn line_numbers_restart_in_each_file() {
    let dir = Dir::new();
    let a = dir.file("a.txt", b"http://a/\nbad a\n");
    let b = dir.file("b.txt", b"bad b\n");
    let run = urinorm(&["normalize", &a, &b], b"");
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!("{a}:2: space")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&format!("{b}:1: space")),
        "{}",
        run.stderr
    );
}

#[test]
fn normalize_writes_one_line_per_accepted_line_in_order() {
    let (run, stats) = counted(
        &["normalize", "--rung", "syntax"],
        b"HTTP://A/./b\nnope nope\n\nhttp://a:/%7e\n",
    );
    assert_eq!(run.stdout, "http://a/b\nhttp://a/~\n");
    assert_eq!(
        run.stderr.lines().next(),
        Some(
            "<stdin>:2: space is not allowed in a URI at byte 4 (--lenient would percent-encode it)"
        )
    );
    assert_eq!(stats["unique"].as_u64(), Some(2));
}

#[test]
fn protocol_presets_and_single_transforms_on_the_command_line() {
    let input = b"http://www.example.com/a/?utm_source=x#top\nhttps://example.com/a\nhttp://www.example.com/a/\n";
    let (run, _) = counted(&["dedup", "--preset", "aggressive"], input);
    assert_eq!(run.stdout, "https://example.com/a\n");
    let (run, _) = counted(
        &["dedup", "--preset", "aggressive", "--without", "strip-www"],
        input,
    );
    assert_eq!(
        run.stdout,
        "https://www.example.com/a\nhttps://example.com/a\n"
    );
    let (run, _) = counted(&["dedup", "--rung", "protocol"], input);
    assert_eq!(
        run.stdout, "http://www.example.com/a/\nhttps://example.com/a\n",
        "the safe preset by default"
    );
    let (run, _) = counted(
        &["normalize", "--with", "drop-fragment", "--key", "surt"],
        input,
    );
    // --with adds to the safe preset, which drops tracking parameters.
    assert_eq!(
        run.stdout,
        "com,example,www)/a/\ncom,example)/a\ncom,example,www)/a/\n"
    );
    let bad = urinorm(&["dedup", "--with", "no-such-transform"], b"");
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown transform 'no-such-transform'"),
        "{}",
        bad.stderr
    );
    let conflict = urinorm(&["dedup", "--rung", "syntax", "--preset", "safe"], b"");
    assert_eq!(conflict.code, 2);
    let listing = urinorm(&["transforms"], b"");
    assert_eq!(listing.code, 0);
    for name in [
        "drop-fragment",
        "sort-query",
        "trailing-slash=remove",
        "aggressive",
        "safe",
    ] {
        assert!(
            listing.stdout.contains(name),
            "{name} missing from `urinorm transforms`"
        );
    }
}

#[test]
fn tracking_list_from_a_file() {
    let dir = Dir::new();
    let list = dir.file("tracking.txt", b"# ours\nref\n");
    let (run, _) = counted(
        &["normalize", "--tracking-params", &list],
        b"http://a/?ref=x&utm_source=y\n",
    );
    assert_eq!(run.stdout, "http://a/?utm_source=y\n");
}

/// `--dupes` writes each duplicate line with the line its class first
/// occurred on; `--capped`, the lines a cap held back, as read: the next
/// batch takes them. The same whether the set fits in memory or spills.
#[test]
fn duplicates_and_capped_lines_are_set_aside_not_lost() {
    let dir = Dir::new();
    let first = dir.file(
        "a.txt",
        b"http://a.example/1\nhttp://a.example/2\nHTTP://A.example/1\nhttp://b.example/1\nhttp://a.example/3\n",
    );
    let second = dir.file("b.txt", b"http://a.example/%33\nhttp://b.example/1\n");
    let (dupes, capped) = (dir.path("dupes.tsv"), dir.path("capped.txt"));
    let (dupes_arg, capped_arg) = (dupes.to_str().unwrap(), capped.to_str().unwrap());
    for spill in [None, Some("1K")] {
        let mut args = vec![
            "dedup",
            "--max-per-host",
            "2",
            "--capped",
            capped_arg,
            "--dupes",
            dupes_arg,
            &first,
            &second,
        ];
        if let Some(limit) = spill {
            args.extend(["--memory-limit", limit]);
        }
        let (run, stats) = crate::common::cli::accounted(&args, b"");
        assert_eq!(
            run.stdout,
            "http://a.example/1\nhttp://a.example/2\nhttp://b.example/1\n"
        );
        assert_eq!(stats["capped"].as_u64(), Some(1));
        assert_eq!(
            std::fs::read_to_string(&capped).unwrap(),
            "http://a.example/3\n"
        );
        assert_eq!(
            std::fs::read_to_string(&dupes).unwrap(),
            format!(
                "{first}:3\t{first}:1\tHTTP://A.example/1\n{second}:1\t{first}:5\thttp://a.example/%33\n{second}:2\t{first}:4\thttp://b.example/1\n"
            ),
            "spill {spill:?}"
        );
        assert_eq!(stats["duplicates"].as_u64(), Some(3));
    }
    // --capped without a cap is refused before any work.
    let run = urinorm(&["dedup", "--capped", capped_arg, &first], b"");
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("give --max-per-host"), "{}", run.stderr);
}
