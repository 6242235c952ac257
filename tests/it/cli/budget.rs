//! Per-site budgets that persist (`--budget-per-host`, `--budget-per-domain`):
//! a site's keys in the seen store counted across batches, commands and
//! times, as a crawl's monthly budget is.

use std::collections::HashMap;

use crate::common::cli::{accounted, urinorm};
use serde_json::Value;

/// Writes `lines` to `name` in `dir`; its path.
fn batch(dir: &tempfile::TempDir, name: &str, lines: &[String]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.display().to_string()
}

fn urls(host: &str, paths: std::ops::Range<u32>) -> Vec<String> {
    paths.map(|i| format!("http://{host}/{i}")).collect()
}

/// Each site's keys in the store, as `seen stats` lists them.
fn held(store: &str) -> HashMap<String, u64> {
    let run = urinorm(&["seen", "stats", "--json", store], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: Value = serde_json::from_str(&run.stdout).unwrap();
    stats["sites"]["nearest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["site"].as_str().unwrap().to_string(),
                s["keys"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_budget_of_3_per_host_across_two_batches_admits_3_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let mut first = urls("a.example", 0..5);
    first.extend(urls("b.example", 0..2));
    let mut second = urls("a.example", 5..9);
    second.extend(urls("b.example", 0..4));
    let (first, second) = (batch(&dir, "1.txt", &first), batch(&dir, "2.txt", &second));
    let capped = dir.path().join("capped.txt");
    let capped_arg = capped.to_str().unwrap();
    let run_batch = |input: &str| {
        let args = [
            "dedup",
            "--seen",
            &store,
            "--budget-per-host",
            "3",
            "--capped",
            capped_arg,
            input,
        ];
        accounted(&args, b"")
    };
    let (run, stats) = run_batch(&first);
    assert_eq!(
        run.stdout,
        "http://a.example/0\nhttp://a.example/1\nhttp://a.example/2\nhttp://b.example/0\nhttp://b.example/1\n"
    );
    assert_eq!(stats["capped"].as_u64(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&capped).unwrap(),
        "http://a.example/3\nhttp://a.example/4\n"
    );
    let (run, stats) = run_batch(&second);
    // a.example's budget is spent; b.example had 2 of 3, its first two held.
    assert_eq!(run.stdout, "http://b.example/2\n");
    assert_eq!(
        (stats["capped"].as_u64(), stats["seen"].as_u64()),
        (Some(5), Some(2))
    );
    let capped_lines = std::fs::read_to_string(&capped).unwrap();
    assert_eq!(capped_lines.lines().count(), 5, "{capped_lines}");
    assert!(capped_lines.contains("http://b.example/3\n"));
    let held = held(&store);
    assert_eq!((held["a.example"], held["b.example"]), (3, 3));
    // A store counts one kind of site.
    let run = urinorm(
        &[
            "dedup",
            "--seen",
            &store,
            "--budget-per-domain",
            "3",
            &second,
        ],
        b"",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("counts its budgets by host"),
        "{}",
        run.stderr
    );
    // The budget may change between runs: the store records counts.
    let (run, _) = accounted(
        &["dedup", "--seen", &store, "--budget-per-host", "5", &second],
        b"",
    );
    assert_eq!(
        run.stdout,
        "http://a.example/5\nhttp://a.example/6\nhttp://b.example/3\n"
    );
    let run = urinorm(&["seen", "verify", &store], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// A key that expires (by --seen-max-age, or removed by `seen expire`) or
/// is forgotten gives its slot back.
#[test]
fn an_expired_or_forgotten_key_frees_a_slot() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let old = batch(&dir, "old.txt", &urls("a.example", 0..3));
    let new = batch(&dir, "new.txt", &urls("a.example", 3..6));
    let day1 = "2026-11-01T00:00:00Z";
    let day3 = "2026-11-03T00:00:00Z";
    let add = |input: &str, now: &str, extra: &[&str]| {
        let mut args = vec![
            "seen",
            "add",
            &store,
            "--budget-per-host",
            "3",
            "--now",
            now,
        ];
        args.extend(extra);
        args.push(input);
        accounted(&args, b"").1
    };
    assert_eq!(add(&old, day1, &[])["unique"].as_u64(), Some(3));
    assert_eq!(add(&new, day1, &[])["capped"].as_u64(), Some(3), "spent");
    // Two days on, a maximum age of a day: the three old keys hold no slot.
    let stats = add(&new, day3, &["--seen-max-age", "1d"]);
    assert_eq!(
        (stats["unique"].as_u64(), stats["capped"].as_u64()),
        (Some(3), Some(0))
    );
    // Forgetting one gives its slot back.
    let forget = batch(&dir, "forget.txt", &urls("a.example", 3..4));
    let (run, _) = accounted(&["seen", "forget", &store, "--now", day3, &forget], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let more = batch(&dir, "more.txt", &urls("a.example", 6..9));
    let stats = add(&more, day3, &["--seen-max-age", "1d"]);
    assert_eq!(
        (stats["unique"].as_u64(), stats["capped"].as_u64()),
        (Some(1), Some(2))
    );
    // `seen expire` removes the old keys for good: without a maximum age
    // they then hold no slot either.
    let run = urinorm(
        &[
            "seen",
            "expire",
            &store,
            "--older-than",
            "1d",
            "--now",
            day3,
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(held(&store)["a.example"], 3);
}

/// A batch far larger than one of the engine's: every host's keys in the
/// store stop at the budget, and the lines add up.
#[test]
fn a_large_batch_stops_every_host_at_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let lines: Vec<String> = (0..200_000)
        .map(|i| format!("http://h{}.example/{}", i % 700, i / 700))
        .collect();
    let input = batch(&dir, "big.txt", &lines);
    let out = dir.path().join("out.txt").display().to_string();
    let (_, stats) = accounted(
        &[
            "dedup",
            "--seen",
            &store,
            "--budget-per-host",
            "50",
            "-o",
            &out,
            &input,
        ],
        b"",
    );
    assert_eq!(stats["unique"].as_u64(), Some(700 * 50));
    assert_eq!(stats["capped"].as_u64(), Some(200_000 - 700 * 50));
    let held = held(&store);
    assert!(held.values().all(|&n| n == 50), "{held:?}");
}

#[test]
fn a_budget_needs_a_store_it_can_write() {
    let dir = tempfile::tempdir().unwrap();
    let input = batch(&dir, "1.txt", &urls("a.example", 0..3));
    for args in [
        vec!["dedup", "--budget-per-host", "3", &input],
        vec![
            "dedup",
            "--seen",
            "s",
            "--seen-readonly",
            "--budget-per-host",
            "3",
            &input,
        ],
        vec![
            "dedup",
            "--max-per-domain",
            "3",
            "--seen",
            "s",
            "--budget-per-host",
            "3",
            &input,
        ],
    ] {
        let run = urinorm(&args, b"");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("budget"), "{}", run.stderr);
    }
}

/// Two clients racing on one `urinorm serve` with a budget of 3 per host:
/// 3 `new` a host in all, the rest `capped`; across a restart, the
/// store's counts go on.
#[test]
fn two_clients_racing_on_a_served_store_get_three_new_a_host() {
    use crate::common::server::{Server, agent, post};
    use std::sync::{Arc, Barrier};
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store").display().to_string();
    let args = ["--commit-every", "20ms", "--budget-per-host", "3"];
    let server = Server::start(&store, &args);
    let url = server.url("/v1/add");
    let barrier = Arc::new(Barrier::new(2));
    let clients: Vec<_> = (0..2)
        .map(|client| {
            let (barrier, url) = (Arc::clone(&barrier), url.clone());
            std::thread::spawn(move || {
                let agent = agent();
                barrier.wait();
                let mut answers = Vec::new();
                for round in 0..20 {
                    let body: String = (0..50)
                        .map(|h| format!("http://h{h}.example/{client}-{round}\n"))
                        .collect();
                    let (status, answer) = post(&agent, &url, body.as_bytes(), None);
                    assert_eq!(status, 200, "{answer}");
                    answers.extend(answer.lines().map(str::to_string));
                }
                answers
            })
        })
        .collect();
    let answers: Vec<String> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    let mut news: HashMap<String, u64> = HashMap::new();
    for line in &answers {
        let (verdict, key) = line.split_once('\t').unwrap();
        assert!(["new", "capped"].contains(&verdict), "{line}");
        let host = key.split('/').nth(2).unwrap().to_string();
        *news.entry(host).or_default() += u64::from(verdict == "new");
    }
    assert_eq!(news.len(), 50);
    assert!(news.values().all(|&n| n == 3), "{news:?}");
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(held(&store)["h0.example"], 3);
    // Restarted with a budget of 4: one more a host, then capped.
    let server = Server::start(&store, &["--budget-per-host", "4"]);
    let (_, answer) = post(
        &agent(),
        &server.url("/v1/add"),
        b"http://h7.example/a\nhttp://h7.example/b\n",
        None,
    );
    assert_eq!(
        answer,
        "new\thttp://h7.example/a\ncapped\thttp://h7.example/b\n"
    );
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
}

/// A budgeted store's history carries each key's site: imported into a
/// new store, the budget goes on from the same counts.
#[test]
fn an_exported_history_carries_the_budgets_sites() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (store, history, copy) = (path("store"), path("history"), path("copy"));
    let first = batch(&dir, "1.txt", &urls("a.example", 0..3));
    let (_, stats) = accounted(
        &["seen", "add", &store, "--budget-per-host", "3", &first],
        b"",
    );
    assert_eq!(stats["unique"].as_u64(), Some(3));
    for args in [
        vec!["seen", "export", &store, "-o", &history],
        vec!["seen", "import", &copy, &history],
    ] {
        let run = urinorm(&args, b"");
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    assert_eq!(held(&copy)["a.example"], 3);
    let more = batch(&dir, "2.txt", &urls("a.example", 3..5));
    let (_, stats) = accounted(
        &["seen", "add", &copy, "--budget-per-host", "4", &more],
        b"",
    );
    assert_eq!(
        (stats["unique"].as_u64(), stats["capped"].as_u64()),
        (Some(1), Some(1))
    );
}
