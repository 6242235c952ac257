//! `dedup --seen DIR` and `urinorm seen`, run as a crawler frontier runs
//! them: batch after batch of the shipped sample, against one store.

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::cli::{Run, accounted, store_keys, urinorm, wait_until, with_stats};
use serde_json::Value;

const SAMPLE: &str = "testdata/sample/urls.txt";

fn sample_lines() -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE)).unwrap();
    text.lines().map(str::to_string).collect()
}

/// Two overlapping batches of the sample, as files in `dir`: lines
/// 1–3000 and 2001–5000, with a few spellings of the first batch's URIs
/// and a rejected line added to the second.
fn batches(dir: &Path) -> (String, String) {
    let lines = sample_lines();
    let first = dir.join("batch1.txt");
    let second = dir.join("batch2.txt");
    std::fs::write(&first, lines[..3000].join("\n") + "\n").unwrap();
    let mut more: Vec<String> = lines[2000..].to_vec();
    more.extend([
        "HTTP://EXAMPLE.COM:80/".into(),
        "http://example.com/".into(),
        "not a uri".into(),
        "".into(),
    ]);
    std::fs::write(&second, more.join("\n") + "\n").unwrap();
    (first.display().to_string(), second.display().to_string())
}

/// A directory with the two batches, and the path of a store in it.
fn setup() -> (tempfile::TempDir, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = batches(dir.path());
    let store = path_in(&dir, "store");
    (dir, first, second, store)
}

/// The path of `name` in `dir`, as an argument.
fn path_in(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

fn run(args: &[&str]) -> Run {
    urinorm(args, b"")
}

/// A run that reads lines (`dedup`, `seen add`): its exit code exactly the
/// one its counts make (the batches hold lines that are not URIs).
fn ok(args: &[&str]) -> Run {
    accounted(args, b"").0
}

/// A command on the store alone (`seen verify`, `seen compact`): exit 0.
fn done(args: &[&str]) -> Run {
    let run = run(args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

fn stats(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The flags that make a plain run's keys what a frontier's are with no
/// option (`--seen`, `seen add`): the frontier default's transforms, and
/// only the schemes a crawler fetches (filtered here, rejected there).
const AS_FRONTIER: [&str; 6] = [
    "--preset",
    "safe",
    "--with",
    "sort-query-pairs",
    "--keep-scheme",
    "http,https,ftp,ftps,ws,wss",
];

/// `args` with [`AS_FRONTIER`] after them.
fn as_frontier<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter().copied().chain(AS_FRONTIER).collect()
}

fn keys_of(file: &str) -> HashSet<String> {
    lines(&ok(&as_frontier(&["dedup", "-q", file])).stdout)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Each `--emit`: the second batch against a store holding the first gives
/// exactly the second batch's dedup less the first's keys, in order; the
/// same bytes with one thread or two, spilled or not, from a file or from
/// standard input.
#[test]
fn the_second_batch_is_its_dedup_less_the_first_batchs_keys() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = batches(dir.path());
    let first_keys = keys_of(&first);
    let canonical = ok(&as_frontier(&["dedup", "-q", &second])).stdout;
    let firsts = ok(&as_frontier(&["dedup", "-q", "--emit", "first", &second])).stdout;
    let counts = ok(&as_frontier(&["dedup", "-q", "--emit", "count", &second])).stdout;
    let unheld = |key: &&str| !first_keys.contains(*key);
    let expected_canonical: Vec<&str> = lines(&canonical).into_iter().filter(unheld).collect();
    let expected_first: Vec<&str> = lines(&canonical)
        .into_iter()
        .zip(lines(&firsts))
        .filter(|(key, _)| unheld(key))
        .map(|(_, first)| first)
        .collect();
    let expected_count: Vec<&str> = lines(&counts)
        .into_iter()
        .filter(|line| unheld(&line.split_once('\t').unwrap().1))
        .collect();
    assert!(
        expected_canonical.len() < lines(&canonical).len() - 900,
        "the batches overlap"
    );
    assert!(!expected_canonical.is_empty());
    let seen_lines = lines(&ok(&as_frontier(&["normalize", "-q", &second])).stdout)
        .into_iter()
        .filter(|key| first_keys.contains(*key))
        .count() as u64;

    let store = dir.path().join("made");
    ok(&["dedup", "-q", "--seen", store.to_str().unwrap(), &first]);
    for (emit, expected) in [
        ("canonical", &expected_canonical),
        ("first", &expected_first),
        ("count", &expected_count),
    ] {
        for flags in [&["-j", "1"][..], &["-j", "2"], &["--memory-limit", "1"]] {
            // Each way in (a file, standard input), each way out (standard
            // output, spooled; a file, whose held lines go in place).
            for (stdin, to_file) in [(false, false), (true, false), (false, true), (true, true)] {
                // A copy of the store for each run: each one commits.
                let copy = dir.path().join("copy");
                let _ = std::fs::remove_dir_all(&copy);
                std::fs::create_dir(&copy).unwrap();
                for entry in std::fs::read_dir(&store).unwrap() {
                    let entry = entry.unwrap();
                    std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
                }
                let json = dir.path().join("stats.json");
                let mut args = vec![
                    "dedup",
                    "-q",
                    "--emit",
                    emit,
                    "--seen",
                    copy.to_str().unwrap(),
                ];
                args.extend_from_slice(flags);
                args.extend(["--stats", json.to_str().unwrap()]);
                let out = dir.path().join("out.txt");
                if to_file {
                    args.extend(["-o", out.to_str().unwrap()]);
                }
                let mut got = if stdin {
                    urinorm(&args, &std::fs::read(&second).unwrap())
                } else {
                    args.push(&second);
                    run(&args)
                };
                if to_file {
                    got.stdout = std::fs::read_to_string(&out).unwrap();
                }
                let what = format!("--emit {emit} {flags:?} stdin={stdin} -o={to_file}");
                assert_eq!(got.code, 1, "{what}: one line is rejected; {}", got.stderr);
                assert_eq!(&lines(&got.stdout), expected, "{what}");
                let s = stats(&json);
                assert_eq!(s["seen"], seen_lines, "{what}");
                assert_eq!(s["unique"], expected.len() as u64, "{what}");
                let sum: u64 = ["unique", "duplicates", "seen", "rejected", "blank"]
                    .iter()
                    .map(|k| s[k].as_u64().unwrap())
                    .sum();
                assert_eq!(s["lines"].as_u64(), Some(sum), "{what}: the invariant");
                assert_eq!(s["seen_store"]["admitted"], expected.len() as u64, "{what}");
                let now = first_keys.len() + expected.len();
                assert_eq!(s["seen_store"]["keys"], now as u64, "{what}");
            }
        }
    }
}

#[test]
fn a_committed_batch_run_again_writes_nothing_and_readonly_commits_nothing() {
    let (_dir, first, second, store) = setup();
    let store = store.as_str();
    let made = ok(&["dedup", "--seen", store, &first]);
    assert!(made.stderr.contains("new keys admitted"), "{}", made.stderr);
    let again = ok(&["dedup", "--seen", store, &first]);
    assert_eq!(again.stdout, "");
    assert!(
        again.stderr.contains(" = 0 unique + 0 duplicates + "),
        "{}",
        again.stderr
    );
    let before = store_keys(store);
    assert_eq!(before, keys_of(&first).len() as u64);
    let readonly = ok(&["dedup", "--seen", store, "--seen-readonly", &second]);
    assert!(!readonly.stdout.is_empty());
    assert!(
        readonly.stderr.contains("read, not written"),
        "{}",
        readonly.stderr
    );
    assert_eq!(store_keys(store), before, "a readonly run commits nothing");
    // What the readonly run wrote is what a writer writes, and admits.
    let written = ok(&["dedup", "--seen", store, &second]);
    assert_eq!(written.stdout, readonly.stdout);
    assert_eq!(
        store_keys(store),
        before + lines(&written.stdout).len() as u64
    );
    done(&["seen", "verify", store]);
}

#[test]
fn seen_add_admits_what_dedup_would_have() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = batches(dir.path());
    let (by_dedup, by_add) = (path_in(&dir, "by-dedup"), path_in(&dir, "by-add"));
    let (by_dedup, by_add) = (by_dedup.as_str(), by_add.as_str());
    let safe = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--preset", "safe"]);
        ok(&all)
    };
    safe(&["dedup", "-q", "--seen", by_dedup, &first]);
    let added = safe(&["seen", "add", by_add, &first]);
    assert!(added.stdout.is_empty(), "seen add writes no output");
    let a = safe(&["dedup", "-q", "--seen", by_dedup, &second]);
    let b = safe(&["dedup", "-q", "--seen", by_add, &second]);
    assert_eq!(a.stdout, b.stdout);
    let compacted = done(&["seen", "compact", by_add]);
    assert!(
        compacted.stdout.contains("merged into 1"),
        "{}",
        compacted.stdout
    );
    done(&["seen", "verify", by_add]);
}

/// Keys made with other options are not comparable: refused, with both
/// configurations named, and no output file made.
#[test]
fn a_run_with_other_key_options_is_refused_before_any_output() {
    let (dir, first, _, store) = setup();
    let store = store.as_str();
    ok(&["dedup", "-q", "--preset", "safe", "--seen", store, &first]);
    let out = dir.path().join("out.txt");
    for other in [
        &["--rung", "scheme"][..],
        &["--preset", "aggressive"],
        &["--preset", "safe", "--with", "strip-www"],
        &["--preset", "safe", "--key", "surt"],
    ] {
        let mut args = vec!["dedup", "--seen", store, "-o", out.to_str().unwrap()];
        args.extend_from_slice(other);
        args.push(&first);
        let refused = run(&args);
        assert_eq!(refused.code, 2, "{other:?}");
        assert!(
            refused
                .stderr
                .contains("holds keys made with other settings than this run's ("),
            "{}",
            refused.stderr
        );
        // Only the settings that differ, each with both values.
        assert!(
            !refused
                .stderr
                .contains("rung: the store's protocol, this run's protocol")
        );
        assert!(
            refused.stderr.contains(": the store's "),
            "{}",
            refused.stderr
        );
        assert_eq!(
            refused.stderr.lines().count(),
            1,
            "one sentence: {}",
            refused.stderr
        );
        assert!(!out.exists(), "{other:?}: no output file");
    }
    // The same keys by other words are the same configuration.
    ok(&[
        "dedup",
        "-q",
        "--with",
        "drop-tracking-params",
        "--seen",
        store,
        "--preset",
        "safe",
        &first,
    ]);
}

/// A refusal names the flags that make the store's keys, and they do.
#[test]
fn a_refusal_names_the_flags_of_the_stores_keys() {
    let dir = tempfile::tempdir().unwrap();
    for (n, made_with) in [
        &[
            "--preset",
            "aggressive",
            "--with",
            "lowercase-query",
            "--key",
            "surt",
        ][..],
        &["--rung", "syntax"],
        &["--preset", "safe", "--without", "drop-fragment"],
        &["--preset", "ia", "--key", "surt"],
        &["--with", "sort-query-pairs", "--key", "host"],
    ]
    .into_iter()
    .enumerate()
    {
        let store = path_in(&dir, &format!("store{n}"));
        let mut args = vec!["dedup", "-q", "--seen", store.as_str()];
        args.extend_from_slice(made_with);
        assert_eq!(urinorm(&args, b"http://a/\n").code, 0, "{made_with:?}");
        let refused = urinorm(
            &["dedup", "-q", "--seen", &store, "--rung", "string"],
            b"http://a/\n",
        );
        assert_eq!(refused.code, 2);
        let (_, flags) = refused
            .stderr
            .trim_end()
            .split_once("the store's keys are made with: ")
            .unwrap_or_else(|| panic!("{}", refused.stderr));
        let mut again = vec!["dedup", "-q", "--seen", store.as_str()];
        again.extend(flags.split(' '));
        let run = urinorm(&again, b"http://a/\n");
        assert_eq!(run.code, 0, "{made_with:?} gave {flags}: {}", run.stderr);
    }
}

#[test]
fn a_header_is_kept_and_counted_apart_from_the_classes() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (path_in(&dir, "one.tsv"), path_in(&dir, "two.tsv"));
    std::fs::write(&one, "url\nhttp://a/\nhttp://b/\n").unwrap();
    std::fs::write(&two, "url\nhttp://b/\nhttp://c/\nhttp://a/\n").unwrap();
    // To standard output (spooled), and into a file (held lines removed in place).
    for (store, out) in [("store", None), ("store2", Some(path_in(&dir, "out.tsv")))] {
        let store = path_in(&dir, store);
        let header = ["dedup", "-q", "--header", "--seen", &store];
        ok(&[&header[..], &[&one]].concat());
        let mut args = header.to_vec();
        if let Some(out) = &out {
            args.extend(["-o", out]);
        }
        args.extend([&one, &two].map(String::as_str));
        let got = match &out {
            Some(out) => {
                ok(&args);
                std::fs::read_to_string(out).unwrap()
            }
            None => ok(&args).stdout,
        };
        assert_eq!(got, "url\nurl\nhttp://c/\n", "-o {out:?}");
    }
}

/// A second writer is refused naming the first one's pid, or waits for it
/// with --seen-wait; both batches are then in the store.
#[test]
fn a_second_writer_is_refused_or_waits() {
    let dir = tempfile::tempdir().unwrap();
    let store = path_in(&dir, "store");
    let store = store.as_str();
    // The first writer holds the lock while it reads its standard input.
    let mut first = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(["dedup", "-q", "--seen", store])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lock = Path::new(store).join("LOCK");
    let pid = first.id().to_string();
    wait_until("the first writer's lock", || {
        std::fs::read_to_string(&lock).is_ok_and(|t| t.trim() == pid)
    });
    let refused = urinorm(&["dedup", "--seen", store], b"http://b/\n");
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains(&format!("being written by process {pid}")),
        "{}",
        refused.stderr
    );
    let waiting = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(["dedup", "--seen", store, "--seen-wait"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut waiting = waiting;
    // Read to its end below: a closed pipe would fail its summary.
    let mut said = std::io::BufReader::new(waiting.stderr.take().unwrap());
    {
        use std::io::{BufRead, Write};
        waiting
            .stdin
            .take()
            .unwrap()
            .write_all(b"http://b/\nhttp://c/\n")
            .unwrap();
        // It says it waits before the first writer is let go.
        let mut line = String::new();
        said.read_line(&mut line).unwrap();
        assert!(
            line.contains(&format!("waiting for process {pid}")),
            "{line}"
        );
        first
            .stdin
            .take()
            .unwrap()
            .write_all(b"http://a/\nhttp://b/\n")
            .unwrap();
    }
    let first = first.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        "http://a/\nhttp://b/\n"
    );
    let second = waiting.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut said, &mut rest).unwrap();
    assert!(rest.contains("1 new keys admitted"), "{rest}");
    assert_eq!(String::from_utf8_lossy(&second.stdout), "http://c/\n");
    assert_eq!(store_keys(store), 3);
}

/// A damaged or foreign store is exit 2 naming the file: never a panic,
/// never taken for an empty store.
#[test]
fn a_damaged_or_foreign_store_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = batches(dir.path());
    let store = dir.path().join("store");
    let s = store.to_str().unwrap();
    ok(&["dedup", "-q", "--seen", s, &first]);
    let run_file = store.join("0000000001.run");
    let manifest = store.join("MANIFEST");
    let good_run = std::fs::read(&run_file).unwrap();
    let good_manifest = std::fs::read(&manifest).unwrap();
    let restore = || {
        std::fs::write(&run_file, &good_run).unwrap();
        std::fs::write(&manifest, &good_manifest).unwrap();
    };
    let flip = |bytes: &[u8], at: usize| {
        let mut bytes = bytes.to_vec();
        bytes[at] ^= 0x20;
        bytes
    };
    type Damage<'a> = (&'a str, Box<dyn Fn() + 'a>, &'a str);
    let cases: Vec<Damage> = vec![
        (
            "a run cut short",
            Box::new(|| std::fs::write(&run_file, &good_run[..good_run.len() - 7]).unwrap()),
            "0000000001.run' is cut short",
        ),
        (
            "a flipped block",
            Box::new(|| std::fs::write(&run_file, flip(&good_run, 64 + 16 * 10)).unwrap()),
            "block 0",
        ),
        (
            "a flipped header",
            Box::new(|| std::fs::write(&run_file, flip(&good_run, 26)).unwrap()),
            "0000000001.run' has a header",
        ),
        (
            "a run removed",
            Box::new(|| std::fs::remove_file(&run_file).unwrap()),
            "0000000001.run' is missing",
        ),
        (
            "a flipped manifest",
            Box::new(|| std::fs::write(&manifest, flip(&good_manifest, 40)).unwrap()),
            "MANIFEST' has a checksum",
        ),
        (
            "a later version",
            Box::new(|| {
                let text = String::from_utf8(good_manifest.clone())
                    .unwrap()
                    .replace("version 2", "version 9");
                std::fs::write(&manifest, text).unwrap()
            }),
            "format version 9",
        ),
        (
            "not a manifest",
            Box::new(|| std::fs::write(&manifest, "hello\n").unwrap()),
            "is not a seen store",
        ),
        (
            "no manifest",
            Box::new(|| std::fs::remove_file(&manifest).unwrap()),
            "MANIFEST' is missing",
        ),
    ];
    for (what, damage, message) in cases {
        restore();
        damage();
        let verify = run(&["seen", "verify", s]);
        assert_eq!(verify.code, 2, "{what}: {}", verify.stderr);
        assert!(verify.stderr.contains(message), "{what}: {}", verify.stderr);
        for readonly in [false, true] {
            let mut args = vec!["dedup", "--seen", s, &second];
            if readonly {
                args.push("--seen-readonly");
            }
            let dedup = run(&args);
            assert_eq!(
                dedup.code, 2,
                "{what} readonly={readonly}: {}",
                dedup.stderr
            );
            assert!(dedup.stdout.is_empty(), "{what}: nothing written");
            assert!(
                !dedup.stderr.contains("panicked"),
                "{what}: {}",
                dedup.stderr
            );
        }
    }
    restore();
    done(&["seen", "verify", s]);
    // A directory of other things is refused, and left as it was.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let refused = run(&["dedup", "--seen", other.to_str().unwrap(), &first]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("is not a seen store"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
}

/// `--now` for day `n` of a crawl that starts 2026-11-01.
fn day(n: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_793_491_200 + n * 86_400);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// A length of time is one grammar for every front end: units together
/// (`1h30m`) as Python's `max_age` and `?older-than=` take them.
#[test]
fn a_maximum_age_takes_compound_durations_and_refuses_others() {
    let (_dir, first, _, store) = setup();
    ok(&["dedup", "-q", "--seen", &store, "--now", &day(0), &first]);
    let later = [
        "dedup",
        "-q",
        "--seen",
        &store,
        "--seen-readonly",
        "-o",
        "/dev/null",
    ];
    let (_, stats) = with_stats(
        &[
            &later[..],
            &["--now", &day(1), "--seen-max-age", "23h30m", &first],
        ]
        .concat(),
        b"",
    );
    assert_eq!(stats["seen"], 0, "a day is past 23h30m: {stats}");
    let (_, stats) = with_stats(
        &[
            &later[..],
            &["--now", &day(1), "--seen-max-age", "1day 30m", &first],
        ]
        .concat(),
        b"",
    );
    assert_eq!(stats["expired"], 0, "{stats}");
    let refused = urinorm(
        &[&later[..], &["--seen-max-age", "soon", &first]].concat(),
        b"",
    );
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("'soon' is not a length of time"),
        "{}",
        refused.stderr
    );
}

/// A recrawl frontier: a batch on day 0, another on day 10 with
/// `--seen-max-age 7d` writes the first batch's URLs again (counted as
/// expired, admitted again with day 10's time), bulk and line by line.
#[test]
fn keys_past_the_maximum_age_are_written_again_and_counted_expired() {
    let (dir, first, second, store) = setup();
    let first_keys = keys_of(&first);
    let second_keys = keys_of(&second);
    ok(&["dedup", "-q", "--seen", &store, "--now", &day(0), &first]);
    // Day 5, a week's age: the first batch is held, as ever.
    let (_, stats) = with_stats(
        &[
            "dedup",
            "-q",
            "--seen",
            &store,
            "--seen-readonly",
            "--now",
            &day(5),
            "--seen-max-age",
            "7d",
            "-o",
            "/dev/null",
            &second,
        ],
        b"",
    );
    assert_eq!(stats["expired"], 0);
    let held_lines = stats["seen"].as_u64().unwrap();
    assert!(held_lines > 900, "{stats}");
    // Day 10: every key the first batch admitted is written again.
    let out = path_in(&dir, "day10.txt");
    let (run, stats) = accounted(
        &[
            "dedup",
            "--seen",
            &store,
            "--now",
            &day(10),
            "--seen-max-age",
            "7d",
            "-o",
            &out,
            &second,
        ],
        b"",
    );
    let written: HashSet<String> = lines(&std::fs::read_to_string(&out).unwrap())
        .into_iter()
        .map(str::to_string)
        .collect();
    assert_eq!(written, second_keys, "nothing is held: every key expired");
    let again = first_keys.intersection(&second_keys).count() as u64;
    assert_eq!(stats["expired"], again, "{stats}");
    assert_eq!(stats["seen"], 0);
    assert_eq!(stats["seen_store"]["readmitted"], again);
    assert!(
        run.stderr
            .contains(&format!("({again} of them expired in the seen store)")),
        "{}",
        run.stderr
    );
    let all: HashSet<&String> = first_keys.union(&second_keys).collect();
    assert_eq!(
        store_keys(&store),
        all.len() as u64,
        "admitted again, counted once"
    );
    done(&["seen", "verify", &store]);
    // Day 12: admitted again on day 10, so held again; line by line, the
    // keys only the first batch has are answered `expired`.
    let verdicts = urinorm(
        &[
            "dedup",
            "--seen",
            &store,
            "--now",
            &day(12),
            "--seen-max-age",
            "7d",
            "--emit",
            "verdict",
            "--line-buffered",
            &first,
        ],
        b"",
    );
    let mut expired = 0;
    for line in lines(&verdicts.stdout) {
        let (verdict, key) = line.split_once('\t').unwrap_or((line, ""));
        match verdict {
            "expired" => {
                assert!(!second_keys.contains(key), "{key} was admitted on day 10");
                expired += 1;
            }
            "seen" => assert!(second_keys.contains(key), "{key}"),
            "dup" | "rejected" | "blank" => {}
            other => panic!("{other}: {line}"),
        }
    }
    assert_eq!(expired, first_keys.difference(&second_keys).count());
    done(&["seen", "verify", &store]);
}

/// `seen expire` removes exactly the keys admitted before the time, and
/// `seen stats` counts keys by age.
#[test]
fn seen_expire_removes_exactly_the_old_keys() {
    let (dir, first, second, store) = setup();
    let first_keys = keys_of(&first);
    let second_keys = keys_of(&second);
    ok(&["seen", "add", "-q", &store, "--now", &day(0), &first]);
    // Keys of both batches, 20 days old by then, admitted again on day 20.
    ok(&[
        "seen",
        "add",
        "-q",
        &store,
        "--now",
        &day(20),
        "--seen-max-age",
        "15d",
        &second,
    ]);
    let only_first = first_keys.difference(&second_keys).count() as u64;
    let total = store_keys(&store);
    let stats = done(&["seen", "stats", "--json", "--now", &day(25), &store]).stdout;
    let stats: Value = serde_json::from_str(&stats).unwrap();
    let ages = &stats["keys_by_age"];
    assert_eq!(ages["day"], 0);
    assert_eq!(ages["week"], second_keys.len() as u64, "{stats}");
    assert_eq!(total - only_first, second_keys.len() as u64);
    assert_eq!(ages["month"], only_first, "{stats}");
    assert_eq!(ages["older"], 0);
    let text = done(&["seen", "stats", "--now", &day(25), &store]).stdout;
    assert!(
        text.contains(&format!("{only_first} admitted 7 to 30 days ago")),
        "{text}"
    );
    let expired = done(&[
        "seen",
        "expire",
        &store,
        "--older-than",
        "10d",
        "--now",
        &day(25),
    ]);
    assert!(
        expired
            .stdout
            .contains(&format!("{only_first} keys admitted before")),
        "{}",
        expired.stdout
    );
    assert_eq!(store_keys(&store), total - only_first);
    done(&["seen", "verify", &store]);
    // What is left is the second batch exactly.
    let out = ok(&["dedup", "-q", "--seen", &store, "--seen-readonly", &first]).stdout;
    let back: HashSet<String> = lines(&out).into_iter().map(str::to_string).collect();
    let expected: HashSet<String> = first_keys.difference(&second_keys).cloned().collect();
    assert_eq!(back, expected);
    drop(dir);
}

/// `seen forget`: the keys of the lines given come back as new in the next
/// batch, the others stay held.
#[test]
fn forgotten_urls_come_back_as_new_and_the_rest_stay_held() {
    let (dir, first, _, store) = setup();
    ok(&["dedup", "-q", "--seen", &store, &first]);
    let all = keys_of(&first);
    let failed: Vec<&String> = all.iter().step_by(7).collect();
    let retry = path_in(&dir, "retry.txt");
    // Written as fetchers report them: not canonical, some twice.
    let text: String = failed
        .iter()
        .map(|k| format!("{}\n{}\n", k.replacen("http://", "HTTP://", 1), k))
        .collect();
    std::fs::write(&retry, text).unwrap();
    let before = store_keys(&store);
    let forgot = urinorm(&["seen", "forget", &store, &retry], b"");
    assert_eq!(forgot.code, 0, "{}", forgot.stderr);
    assert!(
        forgot
            .stderr
            .contains(&format!("{} keys forgotten", failed.len())),
        "{}",
        forgot.stderr
    );
    assert_eq!(store_keys(&store), before - failed.len() as u64);
    done(&["seen", "verify", &store]);
    let out = ok(&["dedup", "-q", "--seen", &store, &first]).stdout;
    let back: HashSet<&str> = lines(&out).into_iter().collect();
    let expected: HashSet<&str> = failed.iter().map(|k| k.as_str()).collect();
    assert_eq!(back, expected, "exactly the forgotten URLs are new again");
    // Forgetting again (they were admitted again) is a run like the first;
    // where there is no store, none is made.
    let again = urinorm(&["seen", "forget", "-q", &store, &retry], b"");
    assert_eq!(again.code, 0, "{}", again.stderr);
    let nowhere = path_in(&dir, "nowhere");
    let missing = urinorm(&["seen", "forget", &nowhere, &retry], b"");
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("there is no seen store"),
        "{}",
        missing.stderr
    );
    assert!(!Path::new(&nowhere).exists());
}

/// A damaged block fails every reader alike once one reader has found it
/// (a one-URL verdict query that reads no damaged block as much as a bulk
/// run); `seen salvage` keeps every key of the intact blocks, says how
/// many entries were lost, and leaves a store that verifies.
#[test]
fn a_damaged_store_fails_every_reader_until_salvaged() {
    let dir = tempfile::tempdir().unwrap();
    // 10,000 keys: three blocks of 4,096 prints (the last shorter).
    let lines: String = (0..10_000)
        .map(|i| format!("http://h{i}.example/p\n"))
        .collect();
    let all = dir.path().join("all.txt");
    std::fs::write(&all, &lines).unwrap();
    let all = all.to_str().unwrap();
    let store = dir.path().join("store");
    let s = store.to_str().unwrap();
    ok(&["seen", "add", "-q", s, all]);
    // A byte of the second block's prints flipped.
    let run_file = store.join("0000000001.run");
    let mut bytes = std::fs::read(&run_file).unwrap();
    bytes[64 + 20 * 4096 + 100] ^= 0x20;
    std::fs::write(&run_file, &bytes).unwrap();
    let bulk = run(&["dedup", "--seen", s, all]);
    assert_eq!(bulk.code, 2, "{}", bulk.stderr);
    assert!(bulk.stderr.contains("(block 1)"), "{}", bulk.stderr);
    assert!(
        bulk.stderr
            .contains(&format!("`urinorm seen salvage '{s}'` rebuilds it")),
        "{}",
        bulk.stderr
    );
    // Every reader after it fails the same way, whatever it reads.
    let one = urinorm(
        &["dedup", "--emit", "verdict", "--seen", s, "--seen-readonly"],
        b"http://new.example/\n",
    );
    assert_eq!(one.code, 2, "{}", one.stdout);
    assert_eq!(one.stderr, bulk.stderr);
    let verify = run(&["seen", "verify", s]);
    assert_eq!(verify.code, 2);
    assert_eq!(verify.stderr, bulk.stderr);
    let salvage = run(&["seen", "salvage", s]);
    assert_eq!(salvage.code, 0, "{}", salvage.stderr);
    assert!(
        salvage
            .stdout
            .contains("salvaged, 4096 entries lost in 1 damaged block; it holds 5904 keys (it counted 10000) in 1 run, and verifies"),
        "{}",
        salvage.stdout
    );
    assert!(salvage.stderr.contains("(block 1)"), "{}", salvage.stderr);
    done(&["seen", "verify", s]);
    // The intact blocks' keys are still held; the lost block's are new.
    let (again, stats) = with_stats(&["dedup", "--seen", s, "-o", "/dev/null", all], b"");
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        (stats["seen"].as_u64(), stats["unique"].as_u64()),
        (Some(5904), Some(4096))
    );
    // A sound store salvages to itself: nothing lost.
    let sound = run(&["seen", "salvage", s]);
    assert!(
        sound
            .stdout
            .contains("nothing was damaged, every key kept; it holds 10000 keys"),
        "{}",
        sound.stdout
    );
}

/// `seen stats` names the flags that make the store's keys: the preset
/// when its transforms are exactly a preset's, with --with/--without else.
#[test]
fn seen_stats_names_the_flags_of_the_stores_keys() {
    let dir = tempfile::tempdir().unwrap();
    for (flags, says) in [
        (
            vec!["--preset", "safe", "--key", "surt"],
            "--preset safe --key surt",
        ),
        (
            vec!["--preset", "aggressive", "--without", "drop-fragment"],
            "--preset aggressive --without drop-fragment",
        ),
    ] {
        let store = dir.path().join(says.replace(' ', "_"));
        let s = store.to_str().unwrap();
        let mut args = vec!["dedup", "-q", "--seen", s];
        args.extend(flags);
        assert_eq!(urinorm(&args, b"http://a/\n").code, 0);
        let stats = done(&["seen", "stats", s]);
        assert!(
            stats
                .stdout
                .contains(&format!("made by the flags: {says}\n")),
            "{}",
            stats.stdout
        );
        let json: Value =
            serde_json::from_str(&done(&["seen", "stats", "--json", s]).stdout).unwrap();
        assert_eq!(json["flags"], says);
    }
}

/// A run cut short by 2 % (a full disk, a partial copy) loses only its
/// filters and fence: salvage keeps every key of its whole blocks, and
/// says how many entries of which run it kept and lost.
#[test]
fn salvage_keeps_a_run_cut_short_but_its_last_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..400_000)
        .map(|i| format!("http://h{}.example/p{i}\n", i % 1000))
        .collect();
    let store = dir.path().join("store");
    let s = store.to_str().unwrap();
    let added = urinorm(&["seen", "add", "-q", s, "-"], lines.as_bytes());
    assert_eq!(added.code, 0, "{}", added.stderr);
    let run_file = store.join("0000000001.run");
    let len = std::fs::metadata(&run_file).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&run_file)
        .unwrap()
        .set_len(len - len / 50)
        .unwrap();
    assert_eq!(run(&["seen", "verify", s]).code, 2);
    let salvage = run(&["seen", "salvage", s]);
    assert_eq!(salvage.code, 0, "{}", salvage.stderr);
    assert!(
        salvage
            .stdout
            .contains("salvaged, every key kept; it holds 400000 keys"),
        "{}",
        salvage.stdout
    );
    assert!(
        salvage.stderr.contains("0000000001.run' is cut short"),
        "{}",
        salvage.stderr
    );
    // Cut inside its blocks: the blocks before the cut are kept.
    let run_file = store.join("0000000002.run");
    let len = std::fs::metadata(&run_file).unwrap().len();
    std::fs::File::options()
        .write(true)
        .open(&run_file)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let salvage = run(&["seen", "salvage", s]);
    assert_eq!(salvage.code, 0, "{}", salvage.stderr);
    let kept = salvage
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("urinorm: run 0000000002.run: "))
        .unwrap_or_else(|| panic!("{}", salvage.stderr));
    let kept: u64 = kept.split(' ').next().unwrap().parse().unwrap();
    assert!(
        kept > 150_000 && kept < 250_000,
        "{kept}: {}",
        salvage.stderr
    );
    assert_eq!(kept % 4096, 0, "whole blocks");
    done(&["seen", "verify", s]);
}
