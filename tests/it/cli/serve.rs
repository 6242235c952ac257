//! `urinorm serve`: the real server on 127.0.0.1 (an ephemeral port),
//! driven over HTTP as a crawler's processes drive it.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use crate::common::cli::urinorm;
use crate::common::server::{Server, agent, get, post, read};
use crate::common::testdata;

fn store_in(dir: &tempfile::TempDir) -> String {
    dir.path().join("store").display().to_string()
}

/// The sample's URLs and lines a frontier meets that are not URLs.
fn sample_with_junk() -> Vec<u8> {
    let mut lines = std::fs::read(testdata("sample/urls.txt")).unwrap();
    lines.extend_from_slice(
        b"\nnot a uri\n   \nhttp://exa mple.com/\nHTTP://Example.COM:80/a/./b\n",
    );
    lines.extend_from_slice(b"http://example.com/a/b\nhttp://\xff/\n\t\nhttp://example.com/a/b");
    lines
}

#[test]
fn its_verdicts_are_dedups_verdicts_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let lines = sample_with_junk();
    let dedup_store = dir.path().join("dedup").display().to_string();
    let dedup = urinorm(
        &["dedup", "-q", "--emit", "verdict", "--seen", &dedup_store],
        &lines,
    );
    assert_eq!(dedup.code, 1, "some lines are rejected: {}", dedup.stderr);
    let server = Server::start(&store_in(&dir), &[]);
    let (status, answer) = post(&agent(), &server.url("/v1/add"), &lines, None);
    assert_eq!(status, 200);
    assert_eq!(answer, dedup.stdout);
    // Asked again: every key is held now.
    let (_, again) = post(&agent(), &server.url("/v1/check"), &lines, None);
    let news = again.lines().filter(|l| l.starts_with("new\t")).count();
    assert_eq!(news, 0, "{again}");
    assert_eq!(again.lines().count(), answer.lines().count());
}

#[test]
fn every_endpoint_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store_in(&dir), &["--commit-every", "50ms"]);
    let agent = agent();
    let (status, check) = post(&agent, &server.url("/v1/check"), b"http://a/x\n", None);
    assert_eq!((status, check.as_str()), (200, "new\thttp://a/x\n"));
    // Checking admitted nothing.
    let (_, add) = post(
        &agent,
        &server.url("/v1/add"),
        b"http://A/x\nhttp://a:80/x\n\nhttp://b/",
        None,
    );
    assert_eq!(
        add,
        "new\thttp://a/x\ndup\thttp://a/x\nblank\nnew\thttp://b/\n"
    );
    let (_, seen) = post(&agent, &server.url("/v1/add"), b"http://a/x\n", None);
    assert_eq!(seen, "seen\thttp://a/x\n");
    let (status, empty) = post(&agent, &server.url("/v1/add"), b"", None);
    assert_eq!((status, empty.as_str()), (200, ""));
    // A frontier takes only what can be fetched.
    let (_, junk) = post(
        &agent,
        &server.url("/v1/add"),
        b"../x
https://
",
        None,
    );
    let reasons: Vec<&str> = junk
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert!(reasons[0].starts_with("a relative reference"), "{junk}");
    assert!(
        reasons[1].starts_with("an http(s) URI without a host"),
        "{junk}"
    );

    // A commit publishes its keys, takes them out of the pending sets,
    // then merges and is counted: wait for all three.
    crate::common::cli::wait_until("a commit", || {
        let (_, stats) = get(&agent, &server.url("/v1/stats"));
        let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
        stats["store"]["keys"] == 2
            && stats["service"]["pending_keys"] == 0
            && stats["service"]["commits"].as_u64() >= Some(1)
    });
    let (status, stats) = get(&agent, &server.url("/v1/stats"));
    assert_eq!(status, 200);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(stats["service"]["lines"]["new"], 3, "{stats:#}");
    assert_eq!(stats["service"]["lines"]["rejected"], 2);
    assert_eq!(stats["service"]["lines"]["dup"], 1);
    assert_eq!(stats["service"]["lines"]["seen"], 1);
    assert_eq!(stats["service"]["lines"]["blank"], 1);
    assert_eq!(stats["service"]["pending_keys"], 0);
    assert_eq!(stats["store"]["config"]["rung"], "protocol");
    assert!(stats["service"]["commits"].as_u64().unwrap() >= 1);

    assert_eq!(get(&agent, &server.url("/healthz")), (200, "ok\n".into()));
    let (status, metrics) = get(&agent, &server.url("/metrics"));
    assert_eq!(status, 200);
    for sample in [
        "urinorm_serve_lines_total{verdict=\"new\"} 3",
        "urinorm_serve_requests_total{endpoint=\"add\",code=\"200\"} 4",
        "urinorm_serve_keys 2",
        "urinorm_serve_pending_keys 0",
        "urinorm_serve_commit_seconds_count ",
        "urinorm_serve_store_bytes ",
    ] {
        assert!(metrics.contains(sample), "{sample} not in {metrics}");
    }
    assert!(metrics.ends_with("# EOF\n"));

    assert_eq!(get(&agent, &server.url("/v2/add")).0, 404);
    assert_eq!(get(&agent, &server.url("/v1/add")).0, 405);
    assert_eq!(post(&agent, &server.url("/healthz"), b"", None).0, 405);
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
}

/// Each of `urls` in a spelling of its own (the same key).
fn spelled(url: &str, how: usize) -> String {
    let Some(rest) = url.strip_prefix("http://") else {
        return url.to_string();
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    match how % 4 {
        0 => url.to_string(),
        1 => format!("HTTP://{}/{path}", host.to_uppercase()),
        2 if !host.contains(':') => format!("http://{host}:80/{path}"),
        _ => format!("http://{host}/./{path}"),
    }
}

#[test]
fn eight_clients_together_get_one_new_per_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store_in(&dir), &["--commit-every", "20ms"]);
    let text = std::fs::read_to_string(testdata("sample/urls.txt")).unwrap();
    let urls: Arc<Vec<String>> = Arc::new(text.lines().map(str::to_string).collect());
    let clients = 8;
    let barrier = Arc::new(Barrier::new(clients));
    let url = server.url("/v1/add");
    let threads: Vec<_> = (0..clients)
        .map(|client| {
            let (urls, barrier, url) = (Arc::clone(&urls), Arc::clone(&barrier), url.clone());
            std::thread::spawn(move || {
                let agent = agent();
                barrier.wait();
                let mut answers = Vec::new();
                // Overlapping halves, in batches of 250, each client its
                // own spellings and its own order.
                let start = client * urls.len() / (2 * clients);
                let mine: Vec<String> = (0..urls.len() / 2)
                    .map(|i| {
                        let at = (start + i * 7 + client) % urls.len();
                        spelled(&urls[at], client + i)
                    })
                    .collect();
                for batch in mine.chunks(250) {
                    let body = batch.join("\n") + "\n";
                    let (status, answer) = post(&agent, &url, body.as_bytes(), None);
                    assert_eq!(status, 200);
                    let lines: Vec<String> = answer.lines().map(str::to_string).collect();
                    assert_eq!(lines.len(), batch.len(), "one verdict a line");
                    answers.extend(lines);
                }
                answers
            })
        })
        .collect();
    let answers: Vec<Vec<String>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut news: HashMap<String, usize> = HashMap::new();
    let mut keys = 0;
    for line in answers.iter().flatten() {
        let (verdict, key) = line.split_once('\t').unwrap_or((line, ""));
        assert!(
            ["new", "dup", "seen", "rejected"].contains(&verdict),
            "{line}"
        );
        if verdict != "rejected" {
            keys += 1;
            *news.entry(key.to_string()).or_default() += usize::from(verdict == "new");
        }
    }
    assert!(keys > 10_000, "{keys}");
    let twice: Vec<_> = news.iter().filter(|&(_, &n)| n != 1).collect();
    assert!(twice.is_empty(), "not one new each: {twice:?}");
    let (code, said) = server.stop();
    assert_eq!(code, Some(0));
    let admitted = format!("{} new keys admitted", news.len());
    assert!(said.contains(&admitted), "{said}");
}

#[test]
fn a_token_is_needed_and_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let token = "s3cret-t0ken-0123456789abcdef";
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let server = Server::start(&store_in(&dir), &["--token-file", file.to_str().unwrap()]);
    let agent = agent();
    let add = server.url("/v1/add");
    assert_eq!(post(&agent, &add, b"http://a/\n", None).0, 401);
    assert_eq!(post(&agent, &add, b"http://a/\n", Some("wrong")).0, 401);
    let basic = agent
        .post(&add)
        .header("Authorization", &format!("Basic {token}"))
        .send(&b"http://a/\n"[..])
        .unwrap();
    assert_eq!(basic.status().as_u16(), 401);
    assert_eq!(basic.headers().get("www-authenticate").unwrap(), "Bearer");
    assert_eq!(get(&agent, &server.url("/metrics")).0, 401);
    assert_eq!(
        post(&agent, &add, b"http://a/\n", Some(token)),
        (200, "new\thttp://a/\n".into())
    );
    let (code, said) = server.stop();
    assert_eq!(code, Some(0));
    assert!(!said.contains(token), "{said}");

    // Beyond loopback, no token is refused before anything is bound.
    let open = urinorm(
        &["serve", "--seen", &store_in(&dir), "--listen", "0.0.0.0:0"],
        b"",
    );
    assert_eq!(open.code, 2);
    assert!(
        open.stderr.contains("needs --token-file"),
        "{}",
        open.stderr
    );
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let run = urinorm(
        &[
            "serve",
            "--seen",
            &store_in(&dir),
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            empty.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("is empty"), "{}", run.stderr);
}

/// Sends `raw` on a fresh connection and reads until the server closes
/// it (or 10 s pass): what it answered.
fn raw_exchange(addr: &str, raw: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(raw).unwrap();
    let mut answer = Vec::new();
    let _ = tcp.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn limits_have_clear_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store_in(&dir),
        &[
            "--max-body",
            "1K",
            "--idle-timeout",
            "1s",
            "--max-line-bytes",
            "100",
        ],
    );
    let agent = agent();
    let add = server.url("/v1/add");
    let big = "http://example.com/a\n".repeat(100);
    let (status, why) = post(&agent, &add, big.as_bytes(), None);
    assert_eq!(
        (status, why.as_str()),
        (413, "the body is larger than --max-body (1024 bytes)\n")
    );
    // Chunked, no length declared: stopped as it passes the limit.
    let mut reader = big.as_bytes();
    let mut chunked = agent
        .post(&add)
        .send(ureq::SendBody::from_reader(&mut reader))
        .unwrap();
    assert_eq!(read(&mut chunked).0, 413);
    // A long line is rejected as in a file; the others are answered.
    let long = format!("http://a/{}\nhttp://b/\n", "x".repeat(200));
    let (status, answer) = post(&agent, &add, long.as_bytes(), None);
    assert_eq!(status, 200);
    assert_eq!(
        answer,
        "rejected\tline longer than the maximum line length at byte 100\nnew\thttp://b/\n"
    );

    let addr = &server.addr;
    assert!(raw_exchange(addr, b"NOT HTTP\r\n\r\n").starts_with("HTTP/1.1 400"));
    let bad_length = b"POST /v1/add HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n";
    assert!(raw_exchange(addr, bad_length).starts_with("HTTP/1.1 400"));
    // A client that stops in its headers, or sends nothing, is let go.
    for silent in [&b"POST /v1/add HTTP/1.1\r\nHost: x\r\n"[..], b""] {
        let started = std::time::Instant::now();
        let answer = raw_exchange(addr, silent);
        assert!(answer.is_empty(), "{answer}");
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "closed by the server"
        );
    }
    // A body that trickles: 408.
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(b"POST /v1/add HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhttp://a/\n")
        .unwrap();
    let mut answer = String::new();
    let _ = tcp.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    // And the server serves on.
    assert_eq!(get(&agent, &server.url("/healthz")).0, 200);
}

#[test]
fn a_stop_commits_and_a_kill_keeps_a_sound_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let lines = std::fs::read(testdata("sample/urls.txt")).unwrap();
    // SIGTERM, long before a commit is due: the stop commits.
    let server = Server::start(&store, &["--commit-every", "1h"]);
    let (_, first) = post(&agent(), &server.url("/v1/add"), &lines, None);
    let news = first.lines().filter(|l| l.starts_with("new\t")).count();
    assert!(news > 1000);
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains(&format!("{news} new keys admitted")),
        "{said}"
    );
    let server = Server::start(&store, &["--commit-every", "1h"]);
    let (_, again) = post(&agent(), &server.url("/v1/check"), &lines, None);
    assert_eq!(again.lines().filter(|l| l.starts_with("new\t")).count(), 0);

    // SIGKILL: what was admitted since the last commit is new again.
    let (_, fresh) = post(
        &agent(),
        &server.url("/v1/add"),
        b"http://fresh.example/\n",
        None,
    );
    assert_eq!(fresh, "new\thttp://fresh.example/\n");
    server.signal("-KILL");
    drop(server);
    let verify = urinorm(&["seen", "verify", &store], b"");
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    let server = Server::start(&store, &[]);
    let (_, fresh) = post(
        &agent(),
        &server.url("/v1/add"),
        b"http://fresh.example/\n",
        None,
    );
    assert_eq!(fresh, "new\thttp://fresh.example/\n");

    assert_eq!(server.stop().0, Some(0));
    // Another configuration is refused, as dedup refuses it.
    let other = urinorm(
        &[
            "serve",
            "--seen",
            &store,
            "--listen",
            "127.0.0.1:0",
            "--rung",
            "syntax",
        ],
        b"",
    );
    assert_eq!(other.code, 2);
    assert!(other.stderr.contains("rung"), "{}", other.stderr);
}

#[test]
fn a_stop_lets_a_request_in_flight_finish() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let server = Server::start(&store, &["--commit-every", "1h"]);
    // Its headers and half its body, then the stop, then the rest.
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    tcp.write_all(b"POST /v1/add HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\nhttp://a/\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.signal("-TERM");
    std::thread::sleep(Duration::from_millis(200));
    tcp.write_all(b"http://b/\n").unwrap();
    let mut answer = String::new();
    let _ = tcp.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.ends_with("new\thttp://a/\nnew\thttp://b/\n"),
        "{answer}"
    );
    let (code, said) = server.wait();
    assert_eq!(code, Some(0), "{said}");
    let server = Server::start(&store, &[]);
    let (_, held) = post(
        &agent(),
        &server.url("/v1/check"),
        b"http://a/\nhttp://b/\n",
        None,
    );
    assert_eq!(held, "seen\thttp://a/\nseen\thttp://b/\n");
}

/// Requests made of random parts (methods, paths, header names and values
/// of any bytes, bodies, lengths that lie): each gets an HTTP answer or a
/// closed connection, never a hang or a crash, and the server serves on.
#[test]
fn random_requests_get_an_answer_or_a_close() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store_in(&dir),
        &["--idle-timeout", "2s", "--max-body", "4K"],
    );
    let method = prop::sample::select(vec![
        "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "G\0T", "",
    ]);
    let path = prop::sample::select(vec![
        "/v1/add",
        "/v1/check",
        "/v1/stats",
        "/healthz",
        "/metrics",
        "/",
        "*",
        "/v1/add?x=%ff",
        "http://h/v1/add",
    ]);
    let bytes = || prop::collection::vec(any::<u8>(), 0..64);
    let header = (bytes(), bytes());
    let request = (
        method,
        path,
        prop::collection::vec(header, 0..6),
        bytes(),
        any::<Option<u16>>(),
        any::<bool>(),
    );
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &request,
            |(method, path, headers, body, length, chunked)| {
                let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: x\r\n").into_bytes();
                for (name, value) in headers {
                    raw.extend_from_slice(&name);
                    raw.extend_from_slice(b": ");
                    raw.extend_from_slice(&value);
                    raw.extend_from_slice(b"\r\n");
                }
                if let Some(length) = length {
                    raw.extend_from_slice(format!("Content-Length: {length}\r\n").as_bytes());
                }
                if chunked {
                    raw.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
                }
                raw.extend_from_slice(b"\r\n");
                raw.extend_from_slice(&body);
                let mut tcp = TcpStream::connect(&server.addr).unwrap();
                tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                tcp.write_all(&raw).unwrap();
                // Nothing more comes: the server must answer or close.
                let _ = tcp.shutdown(std::net::Shutdown::Write);
                let mut answer = Vec::new();
                let read = tcp.read_to_end(&mut answer);
                let reset = read
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset);
                prop_assert!(read.is_ok() || reset, "no answer, no close: {read:?}");
                prop_assert!(
                    answer.is_empty() || answer.starts_with(b"HTTP/1.1 "),
                    "{}",
                    String::from_utf8_lossy(&answer)
                );
                Ok(())
            },
        )
        .unwrap();
    assert_eq!(get(&agent(), &server.url("/healthz")).0, 200);
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
}

/// The store's files: its manifest and runs, by name.
fn store_files(store: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".run") || n == "MANIFEST")
        .collect();
    names.sort();
    names
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// A served store is maintained while it serves: keys forgotten (pending
/// or committed) and expired through the service, runs compacted, and
/// read, verified and copied by commands that need no writer lock; a
/// command that needs the lock names the endpoint to use instead.
#[test]
fn a_served_store_is_forgotten_into_expired_and_backed_up_while_it_serves() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    // Ten days before the service's clock: keys to expire.
    let old: String = (0..50)
        .map(|i| format!("http://old{i}.example/\n"))
        .collect();
    let old_file = dir.path().join("old.txt");
    std::fs::write(&old_file, &old).unwrap();
    let add = urinorm(
        &[
            "seen",
            "add",
            "-q",
            &store,
            old_file.to_str().unwrap(),
            "--now",
            "2026-11-01T00:00:00Z",
        ],
        b"",
    );
    assert_eq!(add.code, 0, "{}", add.stderr);
    let server = Server::start(
        &store,
        &["--commit-every", "1h", "--now", "2026-11-11T00:00:00Z"],
    );
    let agent = agent();
    let (_, added) = post(
        &agent,
        &server.url("/v1/add"),
        b"http://a.example/x\nhttp://b.example/y\n",
        None,
    );
    assert_eq!(added, "new\thttp://a.example/x\nnew\thttp://b.example/y\n");

    // Forgetting: one line each, in order; a forgotten key is new again.
    let body = b"http://A.example/x\nhttp://a.example:80/x\nhttp://nothere.example/\n../rel\n\nhttp://old3.example/\n";
    let (status, forgot) = post(&agent, &server.url("/v1/forget"), body, None);
    assert_eq!(status, 200, "{forgot}");
    let lines: Vec<&str> = forgot.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "forgotten\thttp://a.example/x",
            "dup\thttp://a.example/x",
            "absent\thttp://nothere.example/"
        ]
    );
    assert!(
        lines[3].starts_with("rejected\ta relative reference"),
        "{forgot}"
    );
    assert_eq!(lines[4..], ["blank", "forgotten\thttp://old3.example/"]);
    let (_, again) = post(
        &agent,
        &server.url("/v1/check"),
        b"http://a.example/x\nhttp://b.example/y\nhttp://old3.example/\nhttp://old4.example/\n",
        None,
    );
    assert_eq!(
        again,
        "new\thttp://a.example/x\nseen\thttp://b.example/y\nnew\thttp://old3.example/\nseen\thttp://old4.example/\n"
    );

    // Readers need no lock; a writer is sent to the endpoints.
    let stats = urinorm(&["seen", "stats", "--json", &store], b"");
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    assert_eq!(json(&stats.stdout)["keys"], 50, "{}", stats.stdout);
    let verify = urinorm(&["seen", "verify", &store], b"");
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    let forget = urinorm(&["seen", "forget", &store, old_file.to_str().unwrap()], b"");
    assert_eq!(forget.code, 2);
    let url = server.url("");
    assert!(
        forget.stderr.contains(&format!("`urinorm serve` at {url}")),
        "{}",
        forget.stderr
    );
    assert!(
        forget
            .stderr
            .contains(&format!("POST {url}/v1/add, /v1/forget")),
        "{}",
        forget.stderr
    );
    for command in [
        &["seen", "compact", &store][..],
        &["seen", "expire", &store, "--older-than", "1d"],
    ] {
        let run = urinorm(command, b"");
        assert_eq!(run.code, 2, "{command:?}");
        assert!(
            run.stderr.contains("/v1/expire?older-than=DURATION"),
            "{}",
            run.stderr
        );
    }

    // Expiring: the keys older than a week go, the others stay.
    let (status, expired) = post(&agent, &server.url("/v1/expire?older-than=7d"), b"", None);
    assert_eq!(status, 200, "{expired}");
    let expired = json(&expired);
    assert_eq!(
        (expired["removed"].as_u64(), expired["keys"].as_u64()),
        (Some(49), Some(1)),
        "{expired:#}"
    );
    let (_, after) = post(
        &agent,
        &server.url("/v1/check"),
        b"http://old4.example/\nhttp://b.example/y\n",
        None,
    );
    assert_eq!(
        after,
        "new\thttp://old4.example/\nseen\thttp://b.example/y\n"
    );
    let (status, bad) = post(&agent, &server.url("/v1/expire?older-than=soon"), b"", None);
    assert_eq!(status, 400);
    assert!(
        bad.contains("older-than: 'soon' is not a length of time"),
        "{bad}"
    );
    assert_eq!(post(&agent, &server.url("/v1/expire"), b"", None).0, 400);

    // Compacting, and a copy made meanwhile.
    post(&agent, &server.url("/v1/add"), b"http://c.example/\n", None);
    let (status, compacted) = post(&agent, &server.url("/v1/compact"), b"", None);
    assert_eq!(status, 200);
    assert_eq!(json(&compacted)["runs"], 1, "{compacted}");
    let backup = dir.path().join("backup").display().to_string();
    let copy = urinorm(&["seen", "backup", &store, &backup], b"");
    assert_eq!(copy.code, 0, "{}", copy.stderr);
    assert!(
        copy.stdout
            .contains("2 keys in 1 run, every checksum matches"),
        "{}",
        copy.stdout
    );
    let again = urinorm(&["seen", "backup", &store, &backup], b"");
    assert_eq!(again.code, 2, "a backup never overwrites");
    let (code, said) = server.stop();
    assert_eq!(code, Some(0), "{said}");
    // The copy is a store of its own, that serves.
    let server = Server::start(&backup, &[]);
    let (_, held) = post(
        &agent,
        &server.url("/v1/check"),
        b"http://b.example/y\nhttp://c.example/\n",
        None,
    );
    assert_eq!(held, "seen\thttp://b.example/y\nseen\thttp://c.example/\n");
}

/// A scrub finds damage no request touched: the service says so (healthz
/// 503 with the reason, the metrics, its log), refuses every write, and
/// commits nothing more beside the damaged run.
#[test]
fn damage_found_by_a_scrub_stops_every_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let server = Server::start(
        &store,
        &["--commit-every", "20ms", "--scrub-every", "100ms"],
    );
    let agent = agent();
    // 10,000 keys: three blocks of the one run.
    let body: String = (0..10_000)
        .map(|i| format!("http://h{i}.example/p\n"))
        .collect();
    let (status, _) = post(&agent, &server.url("/v1/add"), body.as_bytes(), None);
    assert_eq!(status, 200);
    crate::common::cli::wait_until("a commit and a scrub", || {
        let stats = json(&get(&agent, &server.url("/v1/stats")).1);
        stats["store"]["keys"] == 10_000 && stats["service"]["scrubs"].as_u64() >= Some(1)
    });
    assert_eq!(get(&agent, &server.url("/healthz")), (200, "ok\n".into()));
    let files = store_files(&store);
    let run = files.iter().find(|n| n.ends_with(".run")).unwrap().clone();
    let path = std::path::Path::new(&store).join(&run);
    let mut bytes = std::fs::read(&path).unwrap();
    // In the second block's prints, which no request below reads.
    for at in 0..4 {
        bytes[64 + 20 * 4096 + 4 + 100 + at] ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    crate::common::cli::wait_until("the scrub finds it", || {
        get(&agent, &server.url("/healthz")).0 == 503
    });
    let (_, health) = get(&agent, &server.url("/healthz"));
    assert!(
        health.starts_with("damaged: ") && health.contains(&run) && health.contains("(block 1)"),
        "{health}"
    );
    let (status, refused) = post(
        &agent,
        &server.url("/v1/add"),
        b"http://fresh-1.example/\n",
        None,
    );
    assert_eq!(status, 503, "{refused}");
    assert!(refused.contains("salvaged"), "{refused}");
    assert_eq!(
        post(
            &agent,
            &server.url("/v1/forget"),
            b"http://h1.example/p\n",
            None
        )
        .0,
        503
    );
    assert_eq!(post(&agent, &server.url("/v1/compact"), b"", None).0, 503);
    let (_, metrics) = get(&agent, &server.url("/metrics"));
    assert!(metrics.contains("urinorm_serve_damaged 1"), "{metrics}");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        store_files(&store),
        files,
        "nothing committed beside the damage"
    );
    let (code, said) = server.stop();
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains(&format!("{run}' has a block of fingerprints (block 1)")),
        "{said}"
    );
    assert!(said.contains("writes are refused"), "{said}");
    // Salvage, then it serves again.
    let salvage = urinorm(&["seen", "salvage", &store], b"");
    assert_eq!(salvage.code, 0, "{}", salvage.stderr);
    let server = Server::start(&store, &[]);
    assert_eq!(get(&agent, &server.url("/healthz")).0, 200);
}

/// /healthz answers a load balancer that has no token; /metrics does with
/// --metrics-public; a short token is refused before anything is bound.
#[test]
fn health_needs_no_token_and_a_short_token_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, "0123456789abcdef-long-enough\n").unwrap();
    let token = file.to_str().unwrap();
    let server = Server::start(&store_in(&dir), &["--token-file", token]);
    let agent = agent();
    assert_eq!(get(&agent, &server.url("/healthz")), (200, "ok\n".into()));
    assert_eq!(get(&agent, &server.url("/metrics")).0, 401);
    assert_eq!(get(&agent, &server.url("/v1/stats")).0, 401);
    drop(server);
    let server = Server::start(
        &store_in(&dir),
        &["--token-file", token, "--metrics-public"],
    );
    assert_eq!(get(&agent, &server.url("/metrics")).0, 200);
    assert_eq!(get(&agent, &server.url("/v1/stats")).0, 401);
    drop(server);
    std::fs::write(&file, "12345\n").unwrap();
    let short = urinorm(
        &[
            "serve",
            "--seen",
            &store_in(&dir),
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            token,
        ],
        b"",
    );
    assert_eq!(short.code, 2);
    assert!(
        short.stderr.contains("is 5 bytes long, too short"),
        "{}",
        short.stderr
    );
    assert!(!short.stderr.contains("12345"), "{}", short.stderr);
}

/// A clock set earlier than the store's last commit is refused, naming
/// both times, unless --replay says it is meant.
#[test]
fn a_clock_that_runs_back_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let day = |d: u32| format!("2026-11-{d:02}T00:00:00Z");
    let dedup = |now: &str, extra: &[&str]| {
        let mut args = vec!["dedup", "-q", "--seen", &store, "--now", now];
        args.extend_from_slice(extra);
        urinorm(&args, b"http://a.example/\n")
    };
    assert_eq!(dedup(&day(10), &[]).code, 0);
    let back = dedup(&day(9), &[]);
    assert_eq!(back.code, 2);
    assert!(
        back.stderr.contains(&format!(
            "--now {} is earlier than the seen store's last commit, at {}",
            day(9),
            day(10)
        )),
        "{}",
        back.stderr
    );
    assert_eq!(dedup(&day(9), &["--replay"]).code, 0);
    let serve = urinorm(
        &[
            "serve",
            "--seen",
            &store,
            "--listen",
            "127.0.0.1:0",
            "--now",
            &day(1),
        ],
        b"",
    );
    assert_eq!(serve.code, 2);
    assert!(serve.stderr.contains("add --replay"), "{}", serve.stderr);
    let add = urinorm(
        &["seen", "add", &store, "-", "--now", &day(1)],
        b"http://b.example/\n",
    );
    assert_eq!(add.code, 2);
}

/// A body of many windows is read and answered a part at a time, as a
/// chunked stream, and its verdicts are still dedup's, byte for byte (a
/// key repeated in a later part is `dup`); gzip and zstd bodies answer as
/// plain ones; other encodings are refused.
#[test]
fn a_large_body_streams_and_compressed_bodies_answer_as_plain() {
    let dir = tempfile::tempdir().unwrap();
    // About 6 MiB, each key twice, far apart, in two spellings.
    let mut lines = Vec::new();
    for round in 0..2 {
        for i in 0..120_000 {
            let host = if round == 0 { "h" } else { "H" };
            lines.extend_from_slice(format!("http://{host}{i}.example/page?q={i}\n").as_bytes());
        }
    }
    lines.extend_from_slice(&sample_with_junk());
    let dedup_store = dir.path().join("dedup").display().to_string();
    let dedup = urinorm(
        &["dedup", "-q", "--emit", "verdict", "--seen", &dedup_store],
        &lines,
    );
    let server = Server::start(&store_in(&dir), &[]);
    let agent = agent();
    let mut response = agent
        .post(&server.url("/v1/check"))
        .send(&lines[..])
        .unwrap();
    assert_eq!(
        response
            .headers()
            .get("transfer-encoding")
            .map(|v| v.to_str().unwrap()),
        Some("chunked")
    );
    let (status, checked) = read(&mut response);
    assert_eq!(status, 200);
    assert_eq!(checked, dedup.stdout, "a check answers as a fresh dedup");
    let (_, added) = post(&agent, &server.url("/v1/add"), &lines, None);
    assert_eq!(added, dedup.stdout);

    // Compressed: the same answers (every key held now).
    let (_, plain) = post(&agent, &server.url("/v1/check"), &lines, None);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &lines).unwrap();
    let gzip = gz.finish().unwrap();
    let zstd = zstd::encode_all(&lines[..], 1).unwrap();
    for (encoding, body) in [("gzip", &gzip), ("zstd", &zstd)] {
        let mut response = agent
            .post(&server.url("/v1/check"))
            .header("Content-Encoding", encoding)
            .send(&body[..])
            .unwrap();
        let (status, answer) = read(&mut response);
        assert_eq!(status, 200, "{encoding}");
        assert!(answer == plain, "{encoding}: not the plain body's answers");
    }
    let mut broken = agent
        .post(&server.url("/v1/check"))
        .header("Content-Encoding", "gzip")
        .send(&b"http://a/\n"[..])
        .unwrap();
    let (status, why) = read(&mut broken);
    assert_eq!(status, 400);
    assert!(why.starts_with("the body is not valid gzip"), "{why}");
    let mut brotli = agent
        .post(&server.url("/v1/check"))
        .header("Content-Encoding", "br")
        .send(&b"http://a/\n"[..])
        .unwrap();
    let (status, why) = read(&mut brotli);
    assert_eq!(status, 415);
    assert!(why.contains("'br' is not taken"), "{why}");
    assert_eq!(server.stop().0, Some(0));
}

/// What the kernel says of a process's memory, in KiB: a line of
/// /proc/PID/status.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Memory does not follow the bodies: two 50 MB bodies answered at once
/// raise the service's peak memory by far less than their size, and past
/// --max-inflight a body is answered 503 with Retry-After.
#[test]
fn two_large_bodies_at_once_hold_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let body: Vec<u8> = (0..1_400_000)
        .flat_map(|i| format!("http://host{}.example/a/page{i}\n", i % 5000).into_bytes())
        .collect();
    assert!(body.len() > 50_000_000, "{}", body.len());
    let add = urinorm(&["seen", "add", "-q", &store, "-"], &body);
    assert_eq!(add.code, 0, "{}", add.stderr);
    let server = Server::start(&store, &[]);
    let pid = server.pid();
    let agent = agent();
    assert_eq!(
        post(
            &agent,
            &server.url("/v1/check"),
            b"http://host1.example/a/page1\n",
            None
        )
        .1,
        "seen\thttp://host1.example/a/page1\n"
    );
    // The peak from here on.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
    let before = status_kib(pid, "VmRSS:");
    let body = Arc::new(body);
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (body, url) = (Arc::clone(&body), server.url("/v1/check"));
            std::thread::spawn(move || post(&crate::common::server::agent(), &url, &body, None))
        })
        .collect();
    for thread in threads {
        let (status, answer) = thread.join().unwrap();
        assert_eq!(status, 200);
        assert_eq!(answer.lines().count(), 1_400_000);
        assert!(answer.lines().all(|l| l.starts_with("seen\t")));
    }
    let peak = status_kib(pid, "VmHWM:");
    let grew = peak.saturating_sub(before);
    eprintln!("two 50 MB bodies at once: RSS {before} KiB, peak {peak} KiB (+{grew} KiB)");
    assert!(grew <= 128 * 1024, "peak RSS grew by {grew} KiB");
    drop(server);

    let server = Server::start(&store, &["--max-inflight", "8K"]);
    let (status, answer) = post(
        &agent,
        &server.url("/v1/check"),
        b"http://host1.example/a/page1\n",
        None,
    );
    assert_eq!(
        (status, answer.as_str()),
        (200, "seen\thttp://host1.example/a/page1\n")
    );
    // A body of no declared length weighs a whole body's memory: refused.
    let mut tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(b"POST /v1/check HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        .unwrap();
    let mut head = vec![0; 4096];
    let n = tcp.read(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 503"), "{head}");
    assert!(head.contains("retry-after: 1\r\n"), "{head}");
    assert!(head.contains("--max-inflight"), "{head}");
}

/// Sockets that send nothing cannot keep a client with the token out:
/// they are closed within seconds, and the oldest of them make way for
/// new connections past --max-connections.
#[test]
fn idle_sockets_do_not_keep_an_authorized_client_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    let token = "0123456789abcdef-idle-test";
    std::fs::write(&file, token).unwrap();
    let server = Server::start(&store_in(&dir), &["--token-file", file.to_str().unwrap()]);
    let idle: Vec<TcpStream> = (0..1100)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let started = std::time::Instant::now();
    let mut response = agent()
        .get(&server.url("/v1/stats"))
        .header("Authorization", &format!("Bearer {token}"))
        .call()
        .unwrap();
    let (status, _) = read(&mut response);
    let took = started.elapsed();
    assert_eq!(status, 200);
    assert!(
        took < Duration::from_secs(2),
        "answered in {took:?} beside 1,100 idle sockets"
    );
    // And they are closed, unasked, within seconds.
    let mut first = &idle[0];
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(
        first.read(&mut byte).unwrap_or(0),
        0,
        "closed by the server"
    );
    drop(idle);
    assert_eq!(server.stop().0, Some(0));
}

/// With no option, a frontier's keys are the safe preset's with
/// sort-query-pairs (as `dedup --seen` and `seen add` make them): a
/// fragment, a tracking parameter and the order of parameters make no new
/// page; what a crawler cannot fetch is rejected with its reason, unless
/// --keep-scheme takes it in.
#[test]
fn the_frontier_default_merges_fragments_and_tracking_and_rejects_mailto() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let server = Server::start(&store, &[]);
    let agent = agent();
    let add = |body: &[u8]| post(&agent, &server.url("/v1/add"), body, None).1;
    assert_eq!(
        add(b"http://a.example/x#one\n"),
        "new\thttp://a.example/x\n"
    );
    assert_eq!(
        add(b"http://a.example/x#two\nhttp://a.example/x?utm_source=z\nhttp://a.example/x\n"),
        "seen\thttp://a.example/x\nseen\thttp://a.example/x\nseen\thttp://a.example/x\n"
    );
    assert_eq!(
        add(b"http://a.example/y?b=2&a=1\nhttp://a.example/y?a=1&b=2\n"),
        "new\thttp://a.example/y?a=1&b=2\ndup\thttp://a.example/y?a=1&b=2\n"
    );
    let refused = add(b"mailto:a@b.c\njavascript:void(0)\ndata:text/plain,x\ntel:+1555\n");
    for line in refused.lines() {
        assert!(
            line.starts_with("rejected\ta URI of a scheme no crawler fetches"),
            "{refused}"
        );
    }
    let (_, stats) = get(&agent, &server.url("/v1/stats"));
    let config = &json(&stats)["store"]["config"];
    assert_eq!(config["rung"], "protocol", "{config}");
    assert!(
        config["transforms"]
            .as_str()
            .unwrap()
            .contains("sort-query-pairs"),
        "{config}"
    );
    drop(server);
    // The same keys as `seen add` makes with no option: the store opens.
    let seed = urinorm(
        &["seen", "add", &store, "-"],
        b"http://b.example/?utm_medium=x\n",
    );
    assert_eq!(seed.code, 0, "{}", seed.stderr);
    let server = Server::start(&store, &[]);
    let (_, held) = post(
        &agent,
        &server.url("/v1/check"),
        b"http://b.example/\n",
        None,
    );
    assert_eq!(held, "seen\thttp://b.example/\n");
    drop(server);
    // --keep-scheme names what a frontier takes (its keys being other).
    let other_dir = tempfile::tempdir().unwrap();
    let other = store_in(&other_dir);
    let server = Server::start(&other, &["--keep-scheme", "http,mailto"]);
    let (_, kept) = post(
        &agent,
        &server.url("/v1/add"),
        b"mailto:a@b.c\nftp://f.example/\n",
        None,
    );
    assert_eq!(kept, "new\tmailto:a@b.c\nfiltered\n");
}
