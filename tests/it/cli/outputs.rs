//! Output paths: each one is checked before any input is read (a bad one
//! is exit 2 naming it, and nothing else is written), and a file that `-o`
//! replaces keeps its permission bits.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::common::cli::{files_in, urinorm};

const INPUT: &[u8] = b"http://a/\nHTTP://A/\nnot a uri\n";

#[test]
fn every_output_path_is_checked_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let rejects = dir.path().join("rejects.tsv");
    let stats = dir.path().join("stats.json");
    let missing = "/nonexistent-urinorm-dir";
    let (out, rejects, stats) = (
        out.to_str().unwrap(),
        rejects.to_str().unwrap(),
        stats.to_str().unwrap(),
    );
    let bad_stats = format!("{missing}/x.json");
    let bad_rejects = format!("{missing}/r.tsv");
    let bad_out = format!("{missing}/o.txt");
    let cases: [(&[&str], &str); 4] = [
        (
            &["-o", out, "--rejects", rejects, "--stats", &bad_stats],
            &bad_stats,
        ),
        (
            &["-o", out, "--stats", stats, "--rejects", &bad_rejects],
            &bad_rejects,
        ),
        (
            &["--rejects", rejects, "--stats", stats, "-o", &bad_out],
            &bad_out,
        ),
        (
            &["-o", out, "--stats", stats, "--temp-dir", missing],
            missing,
        ),
    ];
    for (flags, bad) in cases {
        let mut args = vec!["dedup"];
        args.extend_from_slice(flags);
        let run = urinorm(&args, INPUT);
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert_eq!(
            run.stderr,
            format!("urinorm: cannot write '{bad}': no such directory\n"),
            "{flags:?}"
        );
        assert_eq!(run.stdout, "", "{flags:?}");
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "{flags:?}");
    }
    // All good: each file appears, complete.
    let run = urinorm(
        &["dedup", "-o", out, "--rejects", rejects, "--stats", stats],
        INPUT,
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        files_in(dir.path()),
        ["out.txt", "rejects.tsv", "stats.json"]
    );
    assert_eq!(std::fs::read_to_string(out).unwrap(), "http://a/\n");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(stats).unwrap()).unwrap();
    assert_eq!(json["rejected"], 1);
    assert!(
        std::fs::read_to_string(rejects)
            .unwrap()
            .ends_with("\tnot a uri\n")
    );
}

#[test]
fn a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("private.txt");
    std::fs::write(&private, "old\n").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let fresh = dir.path().join("fresh.txt");
    for path in [&private, &fresh] {
        let run = urinorm(&["dedup", "-q", "-o", path.to_str().unwrap()], INPUT);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert_eq!(std::fs::read_to_string(path).unwrap(), "http://a/\n");
    }
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&private), 0o600);
    // The test process's umask is the binary's: 0666 less it.
    let umask = {
        let probe = dir.path().join("probe");
        std::fs::write(&probe, "").unwrap();
        0o666 & !mode(&probe)
    };
    assert_eq!(mode(&fresh), 0o666 & !umask);
}

/// `-o -` is standard output, as for curl and tar; `--stats -` and
/// `--rejects -` are refused rather than written to a file named `-`.
#[test]
fn a_dash_is_standard_output_or_refused_never_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(["dedup", "-q", "-o", "-"])
        .current_dir(dir.path())
        .stdin(std::fs::File::open(crate::common::testdata("sample/urls.txt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "the sample has rejected lines");
    assert!(run.stdout.starts_with(b"http"));
    for flag in ["--stats", "--rejects"] {
        let args = ["dedup", "-q", flag, "-"];
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_urinorm"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2), "{flag}");
        let said = String::from_utf8_lossy(&run.stderr);
        assert!(said.contains("takes a file name"), "{said}");
    }
    assert!(files_in(dir.path()).is_empty(), "no file named -");
}

/// The output's compression follows its name in any case; a name of a
/// format urinorm does not write is refused before any work, unless asked
/// for plain text.
#[test]
fn an_output_named_for_a_compression_gets_it_or_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let upper = dir.path().join("OUT.GZ");
    let run = urinorm(&["dedup", "-q", "-o", upper.to_str().unwrap()], INPUT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        std::fs::read(&upper).unwrap().starts_with(&[0x1f, 0x8b]),
        "gzip"
    );
    for name in ["out.xz", "out.LZ4", "out.zip"] {
        let path = dir.path().join(name);
        let run = urinorm(&["dedup", "-q", "-o", path.to_str().unwrap()], INPUT);
        assert_eq!(run.code, 2, "{name}");
        assert!(
            run.stderr
                .contains("compression, which urinorm does not write"),
            "{}",
            run.stderr
        );
        assert!(!path.exists());
    }
    let plain = dir.path().join("plain.xz");
    let run = urinorm(
        &[
            "dedup",
            "-q",
            "--compress",
            "none",
            "-o",
            plain.to_str().unwrap(),
        ],
        INPUT,
    );
    assert_eq!(run.code, 1);
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "http://a/\n");
}
