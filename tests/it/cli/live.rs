//! Live use by a running crawler: `urinorm` as a coprocess, one line
//! written, one answer read, against a seen store that commits as it goes
//! and when interrupted.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::common::cli::{store_keys, urinorm, wait_until};

/// A coprocess: its input, and its output read line by line.
struct Coprocess {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Coprocess {
    fn start(args: &[&str]) -> Coprocess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_urinorm"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Coprocess {
            input: child.stdin.take(),
            output: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    /// `dedup --line-buffered` against the store in `store`, committing
    /// every `every`.
    fn frontier(store: &str, every: &str) -> Coprocess {
        let args = [
            "dedup",
            "--line-buffered",
            "--seen",
            store,
            "--commit-every",
            every,
        ];
        Coprocess::start(&args)
    }

    /// Writes one line and reads the one answer.
    fn ask(&mut self, line: &str) -> String {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        let mut answer = String::new();
        self.output.read_line(&mut answer).unwrap();
        assert!(answer.ends_with('\n'), "{line:?}: no answer ({answer:?})");
        answer.pop();
        answer
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args([signal, &pid]).status().unwrap();
        assert!(sent.success());
    }

    /// Closes its input and waits for its exit code (none if killed).
    fn finish(mut self) -> Option<i32> {
        drop(self.input.take());
        self.child.wait().unwrap().code()
    }
}

fn store_in(dir: &tempfile::TempDir) -> String {
    dir.path().join("store").display().to_string()
}

/// Thousands of lines in lockstep: each answer is the verdict a naive model
/// gives (the store's keys, this run's keys so far), as soon as it is asked.
#[test]
fn a_coprocess_gets_each_verdict_as_soon_as_it_asks() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let held: Vec<String> = (0..300).map(|i| format!("http://h{i}.example/")).collect();
    let made = urinorm(
        &["seen", "add", "-q", &store],
        (held.join("\n") + "\n").as_bytes(),
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    let mut coprocess = Coprocess::start(&[
        "dedup",
        "--line-buffered",
        "--emit",
        "verdict",
        "--seen",
        &store,
    ]);
    let mut this_run = HashSet::new();
    let held: HashSet<String> = held.into_iter().collect();
    for n in 0..3000u32 {
        // Keys old and new, each in two spellings; some lines not URIs, some blank.
        let key = format!("http://h{}.example/", (n * 7) % 600);
        let (line, expected) = match n % 10 {
            8 => ("not a uri".to_string(), None),
            9 => (String::new(), Some("blank".to_string())),
            odd => {
                let line = match odd % 2 {
                    0 => key.clone(),
                    _ => key
                        .replace("http://h", "HTTP://H")
                        .replace(".example/", ".EXAMPLE:80/"),
                };
                let verdict = if held.contains(&key) {
                    "seen"
                } else if !this_run.insert(key.clone()) {
                    "dup"
                } else {
                    "new"
                };
                (line, Some(format!("{verdict}\t{key}")))
            }
        };
        let answer = coprocess.ask(&line);
        match expected {
            Some(expected) => assert_eq!(answer, expected, "line {n}: {line:?}"),
            None => assert!(
                answer.starts_with("rejected\tspace is not allowed"),
                "{answer}"
            ),
        }
    }
    assert_eq!(coprocess.finish(), Some(1), "rejected lines: exit 1");
    assert_eq!(store_keys(&store), 300 + this_run.len() as u64);
}

#[test]
fn normalize_answers_line_by_line() {
    let mut coprocess = Coprocess::start(&["normalize", "--line-buffered"]);
    for n in 0..500 {
        let answer = coprocess.ask(&format!("HTTP://Example.COM:80/a/./b/%7e{n}"));
        assert_eq!(answer, format!("http://example.com/a/b/~{n}"));
    }
    assert_eq!(coprocess.finish(), Some(0));
}

/// Interrupted (SIGINT or SIGTERM), a coprocess commits what it answered
/// before it exits with 130; a reader sees commits while it runs.
#[test]
fn an_interrupt_commits_what_was_answered() {
    for signal in ["-INT", "-TERM"] {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(&dir);
        // Commits so rare that only the interrupt's can count.
        let mut coprocess = Coprocess::frontier(&store, "1h");
        for n in 0..100 {
            assert_eq!(
                coprocess.ask(&format!("http://x/{n}")),
                format!("http://x/{n}")
            );
        }
        // A line begun and not finished is not a line.
        write!(coprocess.input.as_mut().unwrap(), "http://x/unfinished").unwrap();
        coprocess.signal(signal);
        assert_eq!(
            coprocess.child.wait().unwrap().code(),
            Some(130),
            "{signal}"
        );
        assert_eq!(store_keys(&store), 100, "{signal}");
        assert_eq!(urinorm(&["seen", "verify", &store], b"").code, 0);
    }
}

/// Killed outright, a coprocess loses at most what it answered in the last
/// `--commit-every`, and the store is never damaged.
#[test]
fn a_kill_loses_at_most_the_last_interval() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let mut coprocess = Coprocess::frontier(&store, "50ms");
    for n in 0..200 {
        coprocess.ask(&format!("http://y/{n}"));
    }
    // Within a few intervals a reader sees every key, the writer still running.
    wait_until("the first 200 keys committed", || store_keys(&store) == 200);
    for n in 200..400 {
        coprocess.ask(&format!("http://y/{n}"));
    }
    coprocess.child.kill().unwrap(); // SIGKILL, at once
    coprocess.child.wait().unwrap();
    assert_eq!(urinorm(&["seen", "verify", &store], b"").code, 0);
    let after = store_keys(&store);
    assert!((200..=400).contains(&after), "{after}");
    // The next run takes over where the store is.
    let next = urinorm(&["dedup", "--seen", &store], b"http://y/0\nhttp://y/399\n");
    let expected = if after == 400 { "" } else { "http://y/399\n" };
    assert_eq!(next.stdout, expected);
    assert!(Path::new(&store).join("MANIFEST").exists());
}

/// Verdicts are the same read in bulk from a file or line by line from a
/// pipe, one per input line, with and without a store.
#[test]
fn verdicts_in_bulk_are_the_verdicts_line_by_line() {
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sample/urls.txt");
    let text = std::fs::read(&sample).unwrap();
    let lines = text.split(|&b| b == b'\n').count() - 1;
    let sample = sample.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for with_store in [false, true] {
        let verdicts = |name: &str, line_buffered: bool| {
            let store = dir.path().join(name).display().to_string();
            let seeded = urinorm(&["seen", "add", "-q", &store], &text[..text.len() / 3]);
            assert_eq!(seeded.code, 1, "{}", seeded.stderr);
            let mut args = vec!["dedup", "-q", "--emit", "verdict"];
            if with_store {
                args.extend(["--seen", &store]);
            }
            let run = match line_buffered {
                true => urinorm(&[&args[..], &["--line-buffered"]].concat(), &text),
                false => urinorm(&[&args[..], &[sample]].concat(), b""),
            };
            assert_eq!(run.code, 1, "{}", run.stderr);
            run.stdout
        };
        let name = |s: &str| format!("{s}-{with_store}");
        let bulk = verdicts(&name("bulk"), false);
        assert_eq!(bulk.lines().count(), lines);
        assert_eq!(bulk.lines().any(|l| l.starts_with("seen\t")), with_store);
        assert_eq!(bulk, verdicts(&name("live"), true));
    }
}

/// Line-buffered against a store, what the store holds stays out whatever
/// else is asked: counts (written at the end, from the whole batch's
/// join), and a memory limit (a store consulted line by line keeps every
/// key in memory: a spilled line would be decided too late).
#[test]
fn line_buffered_counts_and_memory_limits_keep_held_keys_out() {
    let dir = tempfile::tempdir().unwrap();
    for (name, flags, expected) in [
        ("count", &["--emit", "count"][..], "1\thttp://b/\n"),
        ("limit", &["--memory-limit", "1"], "http://b/\nhttp://c/\n"),
    ] {
        let store = dir.path().join(name).display().to_string();
        assert_eq!(
            urinorm(&["seen", "add", "-q", &store], b"http://a/\n").code,
            0
        );
        let mut args = vec!["dedup", "-q", "--line-buffered", "--seen", &store];
        args.extend_from_slice(flags);
        let lines: &[u8] = match name {
            "count" => b"http://a/\nhttp://b/\nhttp://a/\n",
            _ => b"http://a/\nhttp://b/\nhttp://c/\n",
        };
        let run = urinorm(&args, lines);
        assert_eq!(run.stdout, expected, "{name}: {}", run.stderr);
        let held = if name == "count" { 2 } else { 3 };
        assert_eq!(store_keys(&store), held, "{name}: the new keys admitted");
    }
}

/// Over many keys and commits every few milliseconds, each key is
/// answered `new` exactly once, and its repeat (far later) `dup` or
/// `seen`, never `new` again; the store ends with every key once. (The
/// check for whatever bounds a live run's memory.)
#[test]
fn over_many_commits_each_key_is_new_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let key = |i: usize| format!("http://h{}.example/p/{i}\n", i % 997);
    each_key_twice(&store, 1_500_000, key, &["-q", "--commit-every", "5ms"]);
}

/// A live run that commits as it goes keeps its set within the memory
/// limit (32 MiB at most): past it, it commits every key answered and
/// forgets them, and the store answers for them from then on. So a repeat
/// far enough on is `seen`, not `dup`; no key is ever answered `new` twice,
/// and every commit counts in the summary.
#[test]
fn a_live_run_forgets_what_it_committed_and_the_store_answers_for_it() {
    const KEYS: usize = 200_000;
    let dir = tempfile::tempdir().unwrap();
    let store = store_in(&dir);
    let stats = dir.path().join("stats.json");
    let key = |i: usize| format!("https://h{}.example/item/{i}\n", i % 331);
    let flags = ["--memory-limit", "2M", "--stats", stats.to_str().unwrap()];
    let (run, seen) = each_key_twice(&store, KEYS, key, &flags);
    assert!(seen > KEYS / 2, "only {seen} repeats answered by the store");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(stats["seen"], seen as u64);
    assert_eq!(
        stats["seen_store"]["admitted"], KEYS as u64,
        "every commit counts"
    );
    assert!(
        run.stderr.contains(&format!("{KEYS} new keys admitted")),
        "{}",
        run.stderr
    );
}

/// Each of `keys` keys (`key(0)`, `key(1)`, ...) twice, every repeat after
/// all the first lines (past a set's worth of keys), through a committing
/// `dedup --line-buffered --emit verdict --seen STORE` with `flags`. Checks
/// that each first line is `new`, each key once, each repeat `dup` or
/// `seen`, and that the store ends with every key once and verifies.
/// Returns the run and how many repeats the store answered (`seen`).
fn each_key_twice(
    store: &str,
    keys: usize,
    key: impl Fn(usize) -> String,
    flags: &[&str],
) -> (crate::common::cli::Run, usize) {
    let half: String = (0..keys).map(&key).collect();
    let mut args = vec![
        "dedup",
        "--line-buffered",
        "--emit",
        "verdict",
        "--seen",
        store,
    ];
    args.extend_from_slice(flags);
    let run = twice_after_answers(&args, &half, keys);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let verdicts: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(verdicts.len(), 2 * keys);
    let (firsts, repeats) = verdicts.split_at(keys);
    let mut new_keys = HashSet::new();
    for (i, line) in firsts.iter().enumerate() {
        let (verdict, key) = line.split_once('\t').unwrap();
        assert_eq!(verdict, "new", "line {i}: {line}");
        assert!(new_keys.insert(key), "{key} twice");
    }
    let mut seen = 0;
    for (i, line) in repeats.iter().enumerate() {
        let verdict = line.split_once('\t').unwrap().0;
        assert!(
            verdict == "dup" || verdict == "seen",
            "line {}: {line}",
            keys + i
        );
        seen += usize::from(verdict == "seen");
    }
    assert_eq!(store_keys(store), keys as u64);
    assert_eq!(urinorm(&["seen", "verify", store], b"").code, 0);
    (run, seen)
}

/// Runs `urinorm args` with `half` (of `lines` lines) on standard input
/// twice, the second time only once every line of the first has been
/// answered: the repeats come in later batches whatever the pipe's timing
/// (written at once, both halves could reach the run as one batch, and
/// whether the run forgot between them would be luck).
fn twice_after_answers(args: &[&str], half: &str, lines: usize) -> crate::common::cli::Run {
    let mut child = crate::common::cli::spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let (go, second) = std::sync::mpsc::channel::<()>();
    let bytes = half.as_bytes().to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&bytes);
        if second.recv().is_ok() {
            let _ = stdin.write_all(&bytes);
        }
    });
    let mut errors = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut errors, &mut text);
        text
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdout = String::new();
    for _ in 0..lines {
        if out.read_line(&mut stdout).unwrap() == 0 {
            break;
        }
    }
    let _ = go.send(());
    std::io::Read::read_to_string(&mut out, &mut stdout).unwrap();
    feeder.join().unwrap();
    let status = child.wait().unwrap();
    crate::common::cli::Run {
        code: status.code().expect("exited, not killed by a signal"),
        stdout,
        stderr: stderr.join().unwrap(),
    }
}

/// `--commit-every` where a run commits once, at its end, is refused
/// rather than ignored.
#[test]
fn commit_every_is_refused_where_it_cannot_apply() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").display().to_string();
    let out = dir.path().join("out.txt").display().to_string();
    for args in [
        vec!["dedup", "--seen", &store, "--commit-every", "5s"],
        vec![
            "dedup",
            "--seen",
            &store,
            "--commit-every",
            "5s",
            "--line-buffered",
            "-o",
            &out,
        ],
    ] {
        let run = urinorm(&args, b"http://a/\n");
        assert_eq!(run.code, 2, "{args:?}");
        assert!(
            run.stderr
                .contains("--commit-every applies to a run that commits as it goes"),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    let live = urinorm(
        &[
            "dedup",
            "-q",
            "--seen",
            &store,
            "--commit-every",
            "5s",
            "--line-buffered",
        ],
        b"http://a/\n",
    );
    assert_eq!((live.code, live.stdout.as_str()), (0, "http://a/\n"));
}
