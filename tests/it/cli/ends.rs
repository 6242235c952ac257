//! Every run ends, however it fails (#40): an output closed after one line
//! (`| head -1`), a full filesystem, an error in the engine's threads, an
//! interrupt. The inputs are larger than many batches (64 MB: a run of
//! 2 threads takes 16 MB a batch), since a failure that comes while the
//! producer waits to hand over the next batch is the one that hung.
//!
//! Each run is given a deadline far above its time here (a second or two)
//! and killed past it: a hang fails the test, never the suite.

use crate::common::cli::{files_in, store_keys};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Far above any of these runs' time on a loaded machine.
const DEADLINE: Duration = Duration::from_secs(120);

/// About 64 MB of distinct URLs on many hosts, a few lines in ten repeated.
fn big_input() -> Vec<u8> {
    let mut input = Vec::with_capacity(70 << 20);
    let mut i: u64 = 0;
    while input.len() < 64 << 20 {
        let n = if i % 10 == 9 { i / 2 } else { i };
        writeln!(
            input,
            "https://host{}.example.com/section/{}/page-{n}.html?id={n}&ref=list",
            n % 5000,
            n % 97
        )
        .unwrap();
        i += 1;
    }
    input
}

/// A directory holding the big input as `in.txt`.
fn with_big_input() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.txt");
    std::fs::write(&path, big_input()).unwrap();
    (dir, path)
}

fn urinorm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_urinorm"))
}

/// Waits for `child` until the deadline; kills it and fails past it.
fn wait_ending(child: &mut Child, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{what}` did not end within {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `urinorm args…` with `stdin`, its standard output piped to the
/// test, its standard error read on a thread.
fn start_piped(args: &[&str], stdin: Stdio) -> (Child, std::thread::JoinHandle<String>) {
    let mut child = urinorm()
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    (child, stderr)
}

/// Runs `command` (its standard output already set) to its end, within
/// the deadline; returns its exit status and standard error.
fn run_to_end(mut command: Command, what: &str) -> (ExitStatus, String) {
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_ending(&mut child, what);
    (status, stderr.join().unwrap())
}

/// Everything a child wrote on a pipe, read on a thread (so it never blocks).
fn drain(pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = BufReader::new(pipe).read_to_string(&mut text);
        text
    })
}

/// Runs `urinorm args…`, reads one line of its output and closes the pipe,
/// as `| head -1` does; returns the exit status and standard error.
fn first_line_then_close(args: &[&str], stdin: Option<Vec<u8>>) -> (ExitStatus, String) {
    let what = args.join(" ");
    let piped = match stdin {
        Some(_) => Stdio::piped(),
        None => Stdio::null(),
    };
    let (mut child, stderr) = start_piped(args, piped);
    // Standard input fed from a thread, which stops when the pipe closes.
    let feeder = stdin.map(|bytes| {
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        })
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.ends_with('\n'), "`{what}` wrote no first line");
    // The reader is gone: the next write fails with a broken pipe.
    let status = wait_ending(&mut child, &what);
    if let Some(feeder) = feeder {
        feeder.join().unwrap();
    }
    (status, stderr.join().unwrap())
}

#[test]
fn a_pipe_closed_after_one_line_ends_every_command_quietly() {
    let (dir, input) = with_big_input();
    let input = input.to_str().unwrap();
    let store = dir.path().join("store");
    let store = store.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["normalize", input],
        &["normalize", "-j", "1", input],
        &["dedup", input],
        &["dedup", "-j", "1", input],
        &["dedup", "--sort", input],
        &["dedup", "--emit", "count", input],
        &["dedup", "--memory-limit", "1M", input],
        &["dedup", "--seen", store, input],
        &["dedup", "--seen", store, "--emit", "verdict", input],
        &["dedup", "--max-per-host", "100", input],
        &["resolve", "--base", "http://a/b/", input],
        &["ladder", input],
    ];
    for args in commands {
        let (status, stderr) = first_line_then_close(args, None);
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("urinorm: cannot"),
            "{args:?} reported the closed pipe: {stderr}"
        );
    }
}

#[test]
fn a_pipe_closed_after_one_line_ends_a_run_on_standard_input() {
    for command in ["normalize", "dedup"] {
        let (status, stderr) = first_line_then_close(&[command, "-q"], Some(big_input()));
        assert_eq!(status.code(), Some(0), "{command}: {stderr}");
    }
}

#[test]
fn an_endless_input_into_a_closed_pipe_ends() {
    // `yes http://a/b | urinorm normalize | head -1`: the input never ends,
    // so only the closed output can end the run.
    let what = "normalize (endless standard input)";
    let mut child = urinorm()
        .args(["normalize", "-q"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let block = b"HTTP://Example.COM:80/a/./b\n".repeat(4096);
        while pipe.write_all(&block).is_ok() {}
    });
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "http://example.com/a/b\n");
    let status = wait_ending(&mut child, what);
    assert_eq!(status.code(), Some(0));
    feeder.join().unwrap();
}

#[test]
fn a_pipe_closed_on_a_compressed_output_ends_quietly() {
    // `urinorm dedup --compress gzip BIG | head -c 4096`: the blocks are
    // compressed on threads of their own, which must not outlive the run.
    let (_dir, input) = with_big_input();
    for format in ["gzip", "zstd"] {
        let args = ["dedup", "--compress", format, input.to_str().unwrap()];
        let (mut child, stderr) = start_piped(&args, Stdio::null());
        let mut start = [0; 4096];
        child.stdout.take().unwrap().read_exact(&mut start).unwrap();
        let status = wait_ending(&mut child, &args.join(" "));
        let stderr = stderr.join().unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {stderr}");
        assert!(!stderr.contains("urinorm: cannot"), "{format}: {stderr}");
    }
}

/// Runs `urinorm args…` where files can grow to `limit` KiB at most, as on
/// a full filesystem: a write past it fails with EFBIG (the signal that
/// would kill the process is ignored, as `sh` passes on), which takes the
/// same way out as ENOSPC.
fn with_file_size_limit(args: &[&str], limit_kib: u32) -> (ExitStatus, String) {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!(
            "ulimit -f {} && trap '' XFSZ && exec \"$0\" \"$@\"",
            limit_kib * 2 // in 512-byte blocks, the unit POSIX gives
        ))
        .arg(env!("CARGO_BIN_EXE_urinorm"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    run_to_end(sh, &args.join(" "))
}

/// The commands that write a large output with `-o OUT`.
fn writing_commands<'a>(input: &'a str, store: &'a str) -> Vec<Vec<&'a str>> {
    vec![
        vec!["normalize", input],
        vec!["dedup", input],
        vec!["dedup", "-j", "1", input],
        vec!["dedup", "--sort", input],
        vec!["dedup", "--compress", "gzip", input],
        vec!["dedup", "-j", "1", "--compress", "zstd", input],
        vec!["dedup", "--seen", store, input],
        vec!["resolve", "--base", "http://a/b/", input],
    ]
}

/// One sentence naming `out`, exit 2, and nothing left in `out_dir` but
/// what was there.
fn assert_failed_cleanly(status: ExitStatus, stderr: &str, out: &Path, args: &[&str]) {
    assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
    let expected = format!("urinorm: cannot write '{}': ", out.display());
    assert!(stderr.starts_with(&expected), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    assert!(!out.exists(), "{args:?}: a partial output was put in place");
}

#[test]
fn a_full_filesystem_ends_every_command_with_one_sentence() {
    let (dir, input) = with_big_input();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("out.txt");
    let store = dir.path().join("store");
    for args in writing_commands(input.to_str().unwrap(), store.to_str().unwrap()) {
        let mut args = args.clone();
        args.extend(["-q", "-o", out.to_str().unwrap()]);
        let (status, stderr) = with_file_size_limit(&args, 2048);
        assert_failed_cleanly(status, &stderr, &out, &args);
        assert!(files_in(out_dir.path()).is_empty(), "{args:?}: files left");
    }
}

/// A run against a seen store that writes to standard output keeps its
/// output in a temporary copy until the store is read: a full disk there
/// names the copy's directory, and the command line says what moves it.
#[test]
fn a_full_disk_under_the_temporary_copy_ends_with_one_sentence() {
    let (dir, input) = with_big_input();
    let store = dir.path().join("store");
    let temp = tempfile::tempdir().unwrap();
    let args = [
        "dedup",
        "-q",
        "--seen",
        store.to_str().unwrap(),
        "--temp-dir",
        temp.path().to_str().unwrap(),
        input.to_str().unwrap(),
    ];
    let (status, stderr) = with_file_size_limit(&args, 2048);
    assert_eq!(status.code(), Some(2), "{stderr}");
    let expected = format!(
        "(in the temporary copy of the output under '{}'); choose a disk with room with --temp-dir",
        temp.path().display()
    );
    assert!(stderr.trim_end().ends_with(&expected), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_full_standard_output_ends_with_one_sentence() {
    let (_dir, input) = with_big_input();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    for command in ["normalize", "dedup"] {
        let what = format!("{command} > /dev/full");
        let mut run = urinorm();
        run.args([command, "-q"])
            .arg(&input)
            .stdout(full.try_clone().unwrap());
        let (status, stderr) = run_to_end(run, &what);
        assert_eq!(status.code(), Some(2), "{what}: {stderr}");
        assert_eq!(
            stderr,
            "urinorm: cannot write '<stdout>': no space left on device\n"
        );
    }
}

/// A real full filesystem (a 2 MiB tmpfs), where this test may mount one
/// (as root, as CI runs); elsewhere the file-size limit above stands in.
#[test]
fn a_full_tmpfs_ends_every_command_with_one_sentence() {
    let Some(tiny) = Tmpfs::mount("2m") else {
        eprintln!("not root: the full filesystem is a file-size limit only (test above)");
        return;
    };
    let (dir, input) = with_big_input();
    let out = tiny.path.join("out.txt");
    let store = dir.path().join("store");
    for args in writing_commands(input.to_str().unwrap(), store.to_str().unwrap()) {
        let mut args = args.clone();
        args.extend(["-q", "-o", out.to_str().unwrap()]);
        let mut run = urinorm();
        run.args(&args).stdout(Stdio::null());
        let (status, stderr) = run_to_end(run, &args.join(" "));
        assert_failed_cleanly(status, &stderr, &out, &args);
        assert!(stderr.contains("no space left on device"), "{stderr}");
        assert!(files_in(&tiny.path).is_empty(), "{args:?}: files left");
    }
}

/// A store on a full filesystem: the commit fails with one sentence, and
/// leaves the store as it was (it verifies), with no partial run in it.
#[test]
fn a_full_disk_under_the_store_leaves_it_as_it_was() {
    let Some(tiny) = Tmpfs::mount("2m") else {
        eprintln!("not root: no filesystem to fill under a store");
        return;
    };
    let (dir, input) = with_big_input();
    let one = dir.path().join("one.txt");
    std::fs::write(&one, "http://a/\n").unwrap();
    let store = tiny.path.join("store");
    let store = store.to_str().unwrap();
    let made = urinorm()
        .args(["dedup", "-q", "--seen", store, "-o", "/dev/null"])
        .arg(&one)
        .status()
        .unwrap();
    assert!(made.success());
    let args = ["dedup", "-q", "--seen", store, "-o", "/dev/null"];
    let mut run = urinorm();
    run.args(args).arg(&input);
    let (status, stderr) = run_to_end(run, "dedup --seen on a full disk");
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no space left on device"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let left = files_in(Path::new(store));
    assert!(!left.iter().any(|f| f.ends_with(".tmp")), "{left:?}");
    assert_eq!(store_keys(store), 1);
    let verify = urinorm().args(["seen", "verify", store]).output().unwrap();
    assert!(verify.status.success(), "{verify:?}");
}

/// A tmpfs mounted for one test, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| Tmpfs {
            path: dir.path().to_path_buf(),
            _dir: dir,
        })
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn an_error_in_the_engine_ends_the_run() {
    let (dir, input) = with_big_input();
    let input = input.to_str().unwrap();
    // The dedup stage, on the producer's side, cannot spill: its partition
    // files cannot grow (the error comes from the engine's threads, while
    // the writer is waiting for batches).
    let spill_dir = dir.path().join("spill");
    std::fs::create_dir(&spill_dir).unwrap();
    let args = [
        "dedup",
        "-q",
        "--memory-limit",
        "1M",
        "--temp-dir",
        spill_dir.to_str().unwrap(),
        input,
    ];
    let (status, stderr) = with_file_size_limit(&args, 1024);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("urinorm: cannot spill"), "{stderr}");
    assert!(files_in(&spill_dir).is_empty(), "spill files left");

    // The thread reading a compressed input finds it cut short, batches
    // after the first.
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gzip.write_all(&big_input()).unwrap();
    let mut gzip = gzip.finish().unwrap();
    gzip.truncate(gzip.len() - 100);
    let cut = dir.path().join("cut.txt.gz");
    std::fs::write(&cut, gzip).unwrap();
    for command in ["normalize", "dedup"] {
        let mut run = urinorm();
        run.args([command, "-q"]).arg(&cut).stdout(Stdio::null());
        let (status, stderr) = run_to_end(run, command);
        assert_eq!(status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("is damaged"), "{command}: {stderr}");
    }
}

fn interrupt(child: &Child) {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
}

#[test]
fn an_interrupt_ends_a_run_whose_output_is_not_read() {
    let (_dir, input) = with_big_input();
    for command in ["normalize", "dedup"] {
        // Nobody reads the output: the writer waits on a full pipe, the
        // producer on the writer.
        let (mut child, stderr) =
            start_piped(&[command, "-q", input.to_str().unwrap()], Stdio::null());
        let mut first = [0u8; 1];
        child
            .stdout
            .as_mut()
            .unwrap()
            .read_exact(&mut first)
            .unwrap();
        interrupt(&child);
        let status = wait_ending(&mut child, command);
        assert_eq!(status.code(), Some(130), "{command}");
        assert!(stderr.join().unwrap().contains("interrupted"));
    }
}

#[test]
fn an_interrupt_ends_a_live_run_on_a_file_and_commits_what_it_answered() {
    // A live store defers the interrupt to commit first: the engine must
    // see it as the end of a mapped file too, not only of a stream.
    let (dir, input) = with_big_input();
    let store = dir.path().join("store");
    let args = [
        "dedup",
        "-q",
        "--emit",
        "verdict",
        "--line-buffered",
        "--seen",
    ];
    let paths = [store.to_str().unwrap(), input.to_str().unwrap()];
    let (mut child, stderr) = start_piped(&[&args[..], &paths].concat(), Stdio::null());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with("new\t"), "{line}");
    interrupt(&child);
    let answered = drain(stdout);
    let status = wait_ending(&mut child, "dedup --seen --line-buffered");
    let stderr = stderr.join().unwrap();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let answered = 1 + answered.join().unwrap().lines().count() as u64;
    let lines = big_input().iter().filter(|&&b| b == b'\n').count() as u64;
    assert!(answered < lines, "the whole input was answered");
    let store = store.to_str().unwrap();
    let verify = crate::common::cli::urinorm(&["seen", "verify", store], b"");
    assert_eq!(verify.code, 0, "{}", verify.stderr);
    assert!(store_keys(store) <= answered);
}
