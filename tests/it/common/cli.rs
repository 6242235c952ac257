//! Running the built `urinorm` binary the way a user does.

use std::io::Write;
use std::process::{Command, Stdio};

/// What one run of the binary gave back.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Starts `urinorm args…` with its three streams piped.
pub fn spawn(args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the urinorm binary runs")
}

/// Runs `urinorm args…` with `stdin` on standard input.
pub fn urinorm(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = spawn(args);
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // Feed standard input from a thread so a large input cannot deadlock.
    let feeder = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    Run {
        code: output
            .status
            .code()
            .expect("exited, not killed by a signal"),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// How many keys the seen store in `store` holds (`urinorm seen stats --json`).
pub fn store_keys(store: &str) -> u64 {
    let run = urinorm(&["seen", "stats", "--json", store], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    stats["keys"].as_u64().unwrap()
}

/// Runs `urinorm args… --stats FILE` and reads back the stats it wrote.
pub fn with_stats(args: &[&str], stdin: &[u8]) -> (Run, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("stats.json");
    let mut args = args.to_vec();
    args.extend(["--stats", json.to_str().unwrap()]);
    let run = urinorm(&args, stdin);
    let written = std::fs::read(&json).unwrap_or_else(|e| {
        panic!(
            "{args:?} wrote no stats ({e}), exit {}: {}",
            run.code, run.stderr
        )
    });
    (run, serde_json::from_slice(&written).unwrap())
}

/// The exit code a run whose counts are `stats` must end with: 1 when it
/// rejected lines, else 0 (never "0 or 1", which would hide a change).
pub fn exit_code_of(stats: &serde_json::Value) -> i32 {
    let rejected = stats["rejected"]
        .as_u64()
        .expect("rejected lines are counted");
    i32::from(rejected > 0)
}

/// [`with_stats`], checking the exit code is exactly the one its counts make.
pub fn accounted(args: &[&str], stdin: &[u8]) -> (Run, serde_json::Value) {
    let (run, stats) = with_stats(args, stdin);
    assert_eq!(run.code, exit_code_of(&stats), "{args:?}: {}", run.stderr);
    (run, stats)
}

/// Polls `ready` until it holds; past a deadline far above any wait here,
/// fails naming `what`, so that a failure never hangs the suite (and no
/// test sleeps a fixed time, then asserts: a loaded machine is slower).
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Duration::from_secs(60);
    let started = std::time::Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < deadline,
            "waited {deadline:?} for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Every file in `dir`, by name, sorted.
pub fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
