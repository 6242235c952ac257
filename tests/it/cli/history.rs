//! `urinorm seen export` and `seen import`: a store's history as Parquet,
//! out and back in, as a team moving its frontier between a store and
//! Spark would run them.

use std::path::Path;

use crate::common::cli::{Run, accounted, store_keys, urinorm, with_stats};

const SAMPLE: &str = "testdata/sample/urls.txt";

/// `--now` for day `n` of a crawl that starts 2026-11-01.
fn day(n: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_793_491_200 + n * 86_400);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// A run that reads lines (`seen add`): its exit code the one its counts
/// make (the sample holds lines that are not URIs).
fn add(args: &[&str]) -> Run {
    accounted(args, b"").0
}

fn done(args: &[&str]) -> Run {
    let run = urinorm(args, b"");
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run
}

/// The sample's lines `range`, as a file in `dir`.
fn part_of_sample(dir: &Path, name: &str, range: std::ops::Range<usize>) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let path = dir.join(name);
    std::fs::write(&path, lines[range].join("\n") + "\n").unwrap();
    path.display().to_string()
}

/// The verdict of every line of `batch` against `store` on day `n`, with a
/// week's maximum age: what a frontier would be told.
fn verdicts(store: &str, batch: &str, n: u64) -> String {
    let args = [
        "dedup",
        "-q",
        "--seen",
        store,
        "--seen-readonly",
        "--seen-max-age",
        "7d",
        "--now",
        &day(n),
        "--emit",
        "verdict",
        batch,
    ];
    let run = urinorm(&args, b"");
    assert!(run.code <= 1, "{}", run.stderr);
    run.stdout
}

/// A store filled on two days, exported, imported into a new store: the
/// same keys, the same times (on day 11, with a week's maximum age, day
/// 0's keys are expired in both, day 5's held), the same verdict for every
/// line of a batch neither has seen whole.
#[test]
fn a_history_imported_into_a_new_store_gives_the_stores_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let first = part_of_sample(dir.path(), "first.txt", 0..2000);
    let second = part_of_sample(dir.path(), "second.txt", 1500..3500);
    let held_out = part_of_sample(dir.path(), "held-out.txt", 1800..4000);
    let store = dir.path().join("store").display().to_string();
    add(&["seen", "add", "-q", &store, "--now", &day(0), &first]);
    add(&["seen", "add", "-q", &store, "--now", &day(5), &second]);
    let history = dir.path().join("history").display().to_string();
    let exported = done(&["seen", "export", &store, "-o", &history]);
    let keys = store_keys(&store);
    assert!(
        exported
            .stdout
            .contains(&format!("{keys} keys in 1 file of Parquet")),
        "{}",
        exported.stdout
    );
    let copy = dir.path().join("copy").display().to_string();
    let imported = done(&["seen", "import", &copy, &history]);
    assert!(
        imported.stdout.contains(&format!(
            "{keys} keys admitted, 0 renewed with a later time, 0 held already"
        )),
        "{}",
        imported.stdout
    );
    assert_eq!(store_keys(&copy), keys);
    done(&["seen", "verify", &copy]);
    let expected = verdicts(&store, &held_out, 11);
    assert_eq!(verdicts(&copy, &held_out, 11), expected);
    // Day 11 with a week's age: the keys of day 0 are expired, day 5's
    // held.
    assert!(expected.contains("expired") && expected.contains("seen"));
    // The copy's configuration is the store's: a batch with other key
    // options is refused by it as by the store.
    let refused = urinorm(&["seen", "add", "--rung", "syntax", &copy, &held_out], b"");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    // Imported again, into itself: nothing new.
    let again = done(&["seen", "import", &store, &history]);
    assert!(
        again.stdout.contains(&format!(
            "0 keys admitted, 0 renewed with a later time, {keys} held already"
        )),
        "{}",
        again.stdout
    );
    assert_eq!(store_keys(&store), keys);
}

/// A history goes only into a store of its keys' configuration, and
/// what is not a history is refused naming the file, its bytes escaped.
#[test]
fn a_history_of_other_keys_or_no_history_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let first = part_of_sample(dir.path(), "first.txt", 0..500);
    let store = dir.path().join("store").display().to_string();
    add(&["seen", "add", "-q", &store, &first]);
    let history = dir.path().join("history").display().to_string();
    done(&["seen", "export", &store, "-o", &history]);
    let other = dir.path().join("other").display().to_string();
    add(&["seen", "add", "-q", "--rung", "syntax", &other, &first]);
    let before = store_keys(&other);
    let refused = urinorm(&["seen", "import", &other, &history], b"");
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("other settings than this run's"),
        "{}",
        refused.stderr
    );
    assert_eq!(store_keys(&other), before);
    // Exporting over a history that exists is refused; so is a text file
    // taken for one, its name escaped.
    let again = urinorm(&["seen", "export", &store, "-o", &history], b"");
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    let text = dir.path().join("urls\x1b[31m.parquet");
    std::fs::write(&text, "https://example.com/\n").unwrap();
    let bad = urinorm(&["seen", "import", &store, text.to_str().unwrap()], b"");
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .contains("urls\\x1b[31m.parquet': is not a Parquet file"),
        "{}",
        bad.stderr
    );
    assert!(!bad.stderr.contains('\x1b'));
    let missing = urinorm(
        &["seen", "export", "/nonexistent/store", "-o", &history],
        b"",
    );
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("no seen store"),
        "{}",
        missing.stderr
    );
}

/// What a run admits from a history is what `seen add` of the same lines
/// would have: the stats agree with the import's count.
#[test]
fn an_import_extends_a_store_by_what_it_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let first = part_of_sample(dir.path(), "first.txt", 0..1000);
    let second = part_of_sample(dir.path(), "second.txt", 500..1500);
    let (a, b) = (
        dir.path().join("a").display().to_string(),
        dir.path().join("b").display().to_string(),
    );
    add(&["seen", "add", "-q", &a, &first]);
    add(&["seen", "add", "-q", &b, &second]);
    let history = dir.path().join("history").display().to_string();
    done(&["seen", "export", &b, "-o", &history]);
    // What `a` lacks of `b`: the lines of the second batch it answers new.
    let (_, stats) = with_stats(
        &[
            "dedup",
            "-q",
            "--seen",
            &a,
            "--seen-readonly",
            "-o",
            "/dev/null",
            &second,
        ],
        b"",
    );
    let lacking = stats["unique"].as_u64().unwrap();
    let before = store_keys(&a);
    let imported = done(&["seen", "import", &a, &history]);
    assert_eq!(store_keys(&a), before + lacking, "{}", imported.stdout);
    done(&["seen", "verify", &a]);
}
