//! Crash safety of the seen store, proven by killing: writers are SIGKILLed
//! at random instants (while reading, joining, writing their run, renaming
//! the manifest, merging runs; admitting, forgetting, expiring), and after
//! each kill the store verifies and holds exactly the keys of the commit
//! before or of the one the writer was making, never anything in between.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::cli::{store_keys, urinorm, with_stats};

/// The time of day `n` of the test's crawl, as `--now` takes it.
fn day(n: u32) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_secs(1_790_000_000 + u64::from(n) * 86_400);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// How many keys of the store were admitted on day `n` or later.
fn keys_since(store: &str, n: u32) -> u64 {
    // The stats' last day, seen from the day after: day `n` on.
    let run = urinorm(
        &["seen", "stats", "--json", "--now", &day(n + 1), store],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    stats["keys_by_age"]["day"].as_u64().unwrap()
}

/// How many of the lines of `file` the store holds.
fn held(store: &str, file: &str) -> u64 {
    let args = [
        "dedup",
        "-q",
        "--seen",
        store,
        "--seen-readonly",
        "-o",
        "/dev/null",
        file,
    ];
    let (run, stats) = with_stats(&args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    stats["seen"].as_u64().unwrap()
}

/// Batch `n`: `lines` URIs no other batch has.
fn batch(dir: &Path, n: u32, lines: u32) -> String {
    let path = dir.join(format!("batch{n}.txt"));
    let text: String = (0..lines)
        .map(|i| format!("http://host{}.example/{n}/page{i}?q={}\n", i % 97, i * 7))
        .collect();
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A small deterministic generator (xorshift), so a failure can be rerun.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// `urinorm ARGS` run and SIGKILLed at a random instant within `span`.
fn killed_within(args: &[&str], span: Duration, random: &mut Random) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_micros(random.below(span.as_micros() as u64)));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

#[test]
fn a_writer_killed_at_any_instant_leaves_the_old_commit_or_the_new() {
    const KILLS: u32 = 60;
    const LINES: u32 = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let store = store.to_str().unwrap();
    // How long a whole run takes here, to spread the kills over it.
    let started = Instant::now();
    let first = batch(dir.path(), 0, LINES);
    assert_eq!(
        urinorm(
            &[
                "dedup",
                "-q",
                "--seen",
                store,
                "--now",
                &day(0),
                "-o",
                "/dev/null",
                &first
            ],
            b""
        )
        .code,
        0
    );
    let whole = started.elapsed().max(Duration::from_millis(20));
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let (mut before_seen, mut after_seen) = (0, 0);
    let mut batches = vec![first];
    for n in 1..=KILLS {
        let before = store_keys(store);
        let input = batch(dir.path(), n, LINES);
        let out = dir.path().join("out.txt");
        let today = day(n);
        // Five ways in, in turn: a dedup writing output and seen add (each
        // admits the batch), seen forget of an earlier batch, seen salvage
        // (of a sound store: every key kept, its runs rewritten as one),
        // and seen expire of what is older than six days.
        let earlier = batches[random.below(batches.len() as u64) as usize].clone();
        let (args, changed): (Vec<&str>, u64) = match n % 5 {
            0 => (
                vec![
                    "dedup",
                    "-q",
                    "--seen",
                    store,
                    "--now",
                    &today,
                    "-o",
                    out.to_str().unwrap(),
                    &input,
                ],
                before + u64::from(LINES),
            ),
            1 => (
                vec!["seen", "add", "-q", store, "--now", &today, &input],
                before + u64::from(LINES),
            ),
            2 => (
                vec!["seen", "forget", "-q", store, "--now", &today, &earlier],
                before - held(store, &earlier),
            ),
            3 => (vec!["seen", "salvage", store], before),
            _ => (
                vec![
                    "seen",
                    "expire",
                    store,
                    "--older-than",
                    "6d",
                    "--now",
                    &today,
                ],
                keys_since(store, n.saturating_sub(6)),
            ),
        };
        batches.push(input.clone());
        killed_within(&args, whole * 12 / 10, &mut random);
        let verify = urinorm(&["seen", "verify", store], b"");
        assert_eq!(verify.code, 0, "kill {n}: {}", verify.stderr);
        let after = store_keys(store);
        assert!(
            after == before || after == changed,
            "kill {n}: {before} keys before, {after} after ({changed} if it went through)"
        );
        if after == before && after != changed {
            before_seen += 1;
        } else {
            after_seen += 1;
        }
        // An -o file is there whole or not at all.
        if n % 5 == 0 && out.exists() {
            assert_eq!(
                std::fs::read_to_string(&out).unwrap().lines().count(),
                LINES as usize
            );
            std::fs::remove_file(&out).unwrap();
        }
    }
    eprintln!("{KILLS} kills: {before_seen} left the commit before, {after_seen} the new one");
    // The kills fell on both sides of the commit.
    assert!(
        before_seen > 0 && after_seen > 0,
        "{before_seen} before, {after_seen} after"
    );
    // The next writer clears what the killed ones left, and all is well.
    let last = batch(dir.path(), KILLS + 1, 10);
    let run = urinorm(&["seen", "add", store, &last], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut left: Vec<String> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    left.sort();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert_eq!(urinorm(&["seen", "verify", store], b"").code, 0);
}

/// The same proof for a served store: `urinorm serve` SIGKILLed while a
/// forget, an expire or a compaction asked of it over HTTP is under way
/// (each written while lookups go on, then put in place), and while its
/// own merges run after a commit. After each kill the store verifies and
/// holds the keys of the commit before or of the one being made.
#[test]
fn a_service_killed_during_maintenance_leaves_the_old_commit_or_the_new() {
    use crate::common::server::Server;
    const KILLS: u32 = 15;
    const LINES: u32 = 20_000;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let store = store.to_str().unwrap();
    let mut batches = Vec::new();
    // Batches of shrinking size: several runs, so a compaction has work.
    for n in 0..4 {
        let input = batch(dir.path(), n, LINES >> n);
        let add = urinorm(&["seen", "add", "-q", store, "--now", &day(n), &input], b"");
        assert_eq!(add.code, 0, "{}", add.stderr);
        batches.push(input);
    }
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let (mut before_seen, mut after_seen) = (0, 0);
    for n in 4..4 + KILLS {
        let before = store_keys(store);
        let today = day(n);
        let earlier = batches[random.below(batches.len() as u64) as usize].clone();
        // A batch to admit first (its commit merges runs), then the job.
        let input = batch(dir.path(), n, LINES / 4);
        let admitted = before + u64::from(LINES / 4);
        // What the store holds once the job is done too.
        let (path, body, job_done) = match n % 3 {
            0 => (
                "/v1/forget",
                std::fs::read(&earlier).unwrap(),
                admitted - held(store, &earlier),
            ),
            1 => (
                "/v1/expire?older-than=3d",
                Vec::new(),
                keys_since(store, n - 3) + u64::from(LINES / 4),
            ),
            _ => ("/v1/compact", Vec::new(), admitted),
        };
        let server = Server::start(store, &["--commit-every", "1h", "--now", &today]);
        let agent = crate::common::server::agent();
        let add = crate::common::server::post(
            &agent,
            &server.url("/v1/add"),
            &std::fs::read(&input).unwrap(),
            None,
        );
        assert_eq!(add.0, 200);
        let url = server.url(path);
        let asking = std::thread::spawn(move || {
            // The answer may never come: the server is killed.
            let _ = crate::common::server::agent().post(&url).send(&body[..]);
        });
        std::thread::sleep(Duration::from_micros(random.below(150_000)));
        server.signal("-KILL");
        drop(server);
        asking.join().unwrap();
        let verify = urinorm(&["seen", "verify", store], b"");
        assert_eq!(verify.code, 0, "kill {n}: {}", verify.stderr);
        let after = store_keys(store);
        // Before the add's commit, after it, or after the job too.
        let done = [before, admitted, job_done];
        assert!(
            done.contains(&after),
            "kill {n}: {before} keys before, {after} after, one of {done:?} expected"
        );
        match after == before {
            true => before_seen += 1,
            false => after_seen += 1,
        }
        batches.push(input);
    }
    eprintln!("{KILLS} served kills: {before_seen} left the store as it was, {after_seen} changed");
    let last = batch(dir.path(), 99, 10);
    let run = urinorm(&["seen", "add", "--now", &day(99), store, &last], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(urinorm(&["seen", "verify", store], b"").code, 0);
}

/// A history export killed at any instant leaves no history or a whole
/// one; an import killed at any instant leaves a store that verifies, with
/// the keys it had or with the history's added. Run again, the import
/// finishes what the killed one began.
#[test]
fn a_history_export_or_import_killed_at_any_instant_leaves_the_old_state_or_the_new() {
    const KILLS: u32 = 20;
    const LINES: u32 = 60_000;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let input = batch(dir.path(), 0, LINES);
    assert_eq!(urinorm(&["seen", "add", "-q", &store, &input], b"").code, 0);
    let whole_history = dir.path().join("whole").display().to_string();
    let started = Instant::now();
    let run = urinorm(&["seen", "export", &store, "-o", &whole_history], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let whole = started.elapsed().max(Duration::from_millis(20));
    let into = dir.path().join("into").display().to_string();
    let other = batch(dir.path(), 1, 1000);
    assert_eq!(urinorm(&["seen", "add", "-q", &into, &other], b"").code, 0);
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let (mut old, mut new) = (0, 0);
    for n in 0..KILLS {
        let history = dir.path().join(format!("history{n}")).display().to_string();
        let before = store_keys(&into);
        let args: Vec<&str> = match n % 2 {
            0 => vec!["seen", "export", &store, "-o", &history],
            _ => vec!["seen", "import", &into, &whole_history],
        };
        killed_within(&args, whole * 15 / 10, &mut random);
        let went_through = match n % 2 {
            0 => {
                if !Path::new(&history).exists() {
                    false
                } else {
                    // Whole: it imports every key of the store.
                    let check = dir.path().join(format!("check{n}")).display().to_string();
                    let run = urinorm(&["seen", "import", &check, &history], b"");
                    assert_eq!(run.code, 0, "kill {n}: {}", run.stderr);
                    assert_eq!(store_keys(&check), u64::from(LINES), "kill {n}");
                    true
                }
            }
            _ => {
                let verify = urinorm(&["seen", "verify", &into], b"");
                assert_eq!(verify.code, 0, "kill {n}: {}", verify.stderr);
                let after = store_keys(&into);
                let all = 1000 + u64::from(LINES);
                assert!(
                    after == before || after == all,
                    "kill {n}: {before} keys before, {after} after ({all} if it went through)"
                );
                after == all && before != all
            }
        };
        match went_through {
            true => new += 1,
            false => old += 1,
        }
    }
    eprintln!("{KILLS} kills: {old} left the old state, {new} the new one");
    assert!(old > 0 && new > 0, "{old} old, {new} new");
    let run = urinorm(&["seen", "import", &into, &whole_history], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(store_keys(&into), 1000 + u64::from(LINES));
}

/// Each site's keys under a budget, as `seen stats` counts them: the keys
/// that have a site, and the most any site holds.
fn site_counts(store: &str) -> (u64, u64) {
    let run = urinorm(&["seen", "stats", "--json", store], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let most = stats["sites"]["nearest"][0]["keys"].as_u64().unwrap_or(0);
    (stats["sites"]["keys"].as_u64().unwrap(), most)
}

/// A budgeted writer killed at any instant: the site counts are the
/// store's keys (the old commit's or the new one's), never one without
/// the other, and no site is past its budget.
#[test]
fn a_budgeted_writer_killed_at_any_instant_keeps_its_counts_with_its_keys() {
    const KILLS: u32 = 30;
    const LINES: u32 = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let store = store.to_str().unwrap();
    let admit = |budget: u32, input: &str| -> Vec<String> {
        let budget = budget.to_string();
        ["seen", "add", store, "--budget-per-host", &budget, input]
            .map(str::to_string)
            .to_vec()
    };
    let started = Instant::now();
    let first = batch(dir.path(), 0, LINES);
    let args = admit(100, &first);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(urinorm(&args, b"").code, 0);
    let whole = started.elapsed().max(Duration::from_millis(20));
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    for n in 1..=KILLS {
        let before = store_keys(store);
        // 97 hosts, the budget a few more keys each than the store holds.
        let budget = 100 + n * 10;
        let input = batch(dir.path(), n, LINES);
        let args = admit(budget, &input);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        killed_within(&args, whole * 2, &mut random);
        let run = urinorm(&["seen", "verify", store], b"");
        assert_eq!(run.code, 0, "after kill {n}: {}", run.stderr);
        let keys = store_keys(store);
        // The new commit fills every host to its budget.
        let filled = 97 * u64::from(budget);
        assert!(
            keys == before || keys == filled,
            "after kill {n}: {before} then {keys}"
        );
        let (sited, most) = site_counts(store);
        assert_eq!(
            sited, keys,
            "after kill {n}: every key has its site counted"
        );
        assert!(
            most <= u64::from(budget),
            "after kill {n}: {most} past {budget}"
        );
    }
}
