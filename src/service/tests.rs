//! Tests of the service without HTTP: racing requests and commits, a
//! failing commit's bound, a closed service.

use super::*;
use crate::line::Columns;
use crate::line::key::KeyFormat;
use crate::normalize::{Normalizer, Rung};
use crate::store::Access;

fn service(dir: &std::path::Path, settings: Settings) -> Service {
    let lines = NormalizeLines::new(
        Normalizer::new(Rung::Scheme),
        KeyFormat::Canonical,
        Columns::default(),
    );
    let config = Config::new(lines.key_settings());
    let store = Store::open(dir, &config, Access::Write { wait: false }).unwrap();
    Service::start(store, lines, settings).unwrap()
}

fn words(answer: &Answer) -> Vec<String> {
    String::from_utf8_lossy(&answer.body)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Threads asking overlapping keys in their own spellings while the
/// committer commits every millisecond: one `new` per key in all.
#[test]
fn racing_requests_and_commits_give_one_new_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        commit_every: Duration::from_millis(1),
        pending_keys: 64,
        ..Settings::default()
    };
    let service = service(dir.path(), settings);
    let keys = 2_000;
    let answers: Vec<Vec<String>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let service = &service;
                scope.spawn(move || {
                    let mut seen = Vec::new();
                    for batch in 0..40 {
                        let body: String = (0..100)
                            .map(|i| {
                                let k = (t * 331 + batch * 100 + i) % keys;
                                match (t + i) % 3 {
                                    0 => format!("http://h{k}.example/p\n"),
                                    1 => format!("HTTP://H{k}.EXAMPLE:80/p\n"),
                                    _ => format!("http://h{k}.example/./p\n"),
                                }
                            })
                            .collect();
                        let answer = service.answer(body.as_bytes(), true).unwrap();
                        assert_eq!(answer.counts.iter().sum::<u64>(), 100);
                        seen.extend(words(&answer));
                    }
                    seen
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let mut news = std::collections::HashMap::<String, u32>::new();
    for line in answers.iter().flatten() {
        let (word, key) = line.split_once('\t').unwrap();
        assert!(["new", "dup", "seen"].contains(&word), "{line}");
        *news.entry(key.to_string()).or_default() += u32::from(word == "new");
    }
    assert!(news.values().all(|&n| n == 1), "a key new twice or never");
    let committed = service.close().unwrap();
    assert_eq!(committed.admitted, news.len() as u64);
    assert_eq!(committed.keys, news.len() as u64);
}

/// A commit that fails keeps its keys (still answered `seen`), says
/// so, refuses to admit past its bound, and the next commit that can
/// write takes them all.
#[test]
fn a_failing_commit_keeps_its_keys_and_refuses_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let settings = Settings {
        commit_every: Duration::from_millis(5),
        pending_keys: 4,
        ..Settings::default()
    };
    let service = service(&store, settings);
    std::fs::remove_dir_all(&store).unwrap();
    let body: String = (0..20).map(|k| format!("http://k{k}/\n")).collect();
    let first = service.answer(body.as_bytes(), true).unwrap();
    assert_eq!(first.counts[0], 20, "all new");
    let failing = || service.status().failing.is_some();
    while !failing() {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        words(&service.answer(b"http://k3/", false).unwrap()),
        ["seen\thttp://k3/"]
    );
    match service.answer(b"http://other/", true) {
        Err(Refused::Full(why)) => assert!(!why.is_empty()),
        other => panic!("admitted past the bound: {other:?}"),
    }
    // Checking still answers.
    assert!(service.answer(b"http://other/", false).is_ok());
    std::fs::create_dir(&store).unwrap();
    while failing() || service.status().pending_keys > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(service.status().keys, 20);
    assert!(service.status().failed_commits > 0);
    assert_eq!(service.close().unwrap().admitted, 20);
}

#[test]
fn a_closed_service_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), Settings::default());
    service.answer(b"http://a/", true).unwrap();
    assert_eq!(service.close().unwrap().admitted, 1);
    assert!(matches!(
        service.answer(b"http://b/", true),
        Err(Refused::Stopping)
    ));
    // Closing twice commits nothing more.
    assert_eq!(service.close().unwrap().admitted, 1);
}
