//! `dedup --memory-limit`: past the limit, keys spill to partition files and
//! the output is the same bytes as in memory, for every `--emit` and `-j`;
//! the summary says so; temporary files go away on success, on a full disk
//! and on Ctrl-C.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::cli::{files_in, urinorm, wait_until};
use serde_json::Value;
use urinorm::normalize::{Normalizer, Rung};

/// About 27 MB of valid lines (more than a batch of chunks at -j 2): the
/// sample's URLs with spellings that merge at the scheme rung, and many
/// distinct ones.
fn corpus() -> Vec<u8> {
    let sample = std::fs::read_to_string(crate::common::testdata("sample/urls.txt")).unwrap();
    let scheme = Normalizer::new(Rung::Scheme);
    let urls: Vec<&str> = sample
        .lines()
        .filter(|l| l.starts_with("http") && !l.contains('#') && scheme.normalize(l).is_ok())
        .collect();
    let mut out = Vec::new();
    for i in 0..450_000usize {
        let url = urls[i % urls.len()];
        let line = match i % 5 {
            0 => url.to_string(),
            1 => url.replacen("http", "HTTP", 1),
            2 => format!("{url}#{}", i % 7),
            _ => format!("{url}?n={i}"),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

fn write_corpus(dir: &Path) -> String {
    let path = dir.join("corpus.txt");
    std::fs::write(&path, corpus()).unwrap();
    path.to_str().unwrap().to_string()
}

fn stats(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn spilled_output_is_the_same_bytes_for_every_emit_and_thread_count() {
    let work = tempfile::tempdir().unwrap();
    let spill_dir = tempfile::tempdir().unwrap();
    let input = write_corpus(work.path());
    let out = |name: &str| work.path().join(name).to_str().unwrap().to_string();
    for emit in ["canonical", "first", "count"] {
        for threads in ["1", "2"] {
            let common = ["dedup", "--emit", emit, "-j", threads, &input];
            let mut in_memory = common.to_vec();
            let (memory_out, memory_stats) = (out("memory.txt"), out("memory.json"));
            in_memory.extend(["-o", &memory_out, "--stats", &memory_stats]);
            let run = urinorm(&in_memory, b"");
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(!run.stderr.contains("spilled"), "{}", run.stderr);

            let mut spilled = common.to_vec();
            let (spill_out, spill_stats) = (out("spill.txt"), out("spill.json"));
            let temp_dir = spill_dir.path().to_str().unwrap();
            spilled.extend(["-o", &spill_out, "--stats", &spill_stats]);
            spilled.extend(["--memory-limit", "2M", "--temp-dir", temp_dir]);
            let run = urinorm(&spilled, b"");
            assert_eq!(run.code, 0, "{}", run.stderr);
            assert!(
                run.stderr.contains("over the memory limit: spilled")
                    && run.stderr.contains(temp_dir),
                "{emit} -j {threads}: {}",
                run.stderr
            );
            assert!(
                std::fs::read(&memory_out).unwrap() == std::fs::read(&spill_out).unwrap(),
                "{emit} -j {threads}: the spilled output differs"
            );
            let (memory, spill) = (
                stats(Path::new(&memory_stats)),
                stats(Path::new(&spill_stats)),
            );
            for count in ["lines", "unique", "duplicates", "rejected", "blank"] {
                assert_eq!(memory[count], spill[count], "{emit} -j {threads}: {count}");
            }
            assert!(spill["spill"]["records"].as_u64().unwrap() > 0);
            assert!(
                files_in(spill_dir.path()).is_empty(),
                "spill files left behind"
            );
        }
    }
}

#[test]
fn standard_input_spills_too() {
    let spill_dir = tempfile::tempdir().unwrap();
    let input = corpus();
    let in_memory = urinorm(&["dedup", "--quiet"], &input);
    let temp_dir = spill_dir.path().to_str().unwrap();
    let spilled = urinorm(
        &["dedup", "--memory-limit", "1M", "--temp-dir", temp_dir],
        &input,
    );
    assert_eq!(spilled.code, 0, "{}", spilled.stderr);
    assert!(spilled.stderr.contains("spilled"), "{}", spilled.stderr);
    assert!(in_memory.stdout == spilled.stdout);
    assert!(files_in(spill_dir.path()).is_empty());
}

#[test]
fn sizes_are_checked() {
    for bad in ["0", "12X", "-1M", ""] {
        let flag = format!("--memory-limit={bad}");
        let run = urinorm(&["dedup", &flag], b"http://a/\n");
        assert_eq!(run.code, 2, "{bad}");
        assert!(run.stderr.contains("--memory-limit"), "{}", run.stderr);
    }
    let run = urinorm(
        &["dedup", "--quiet", "--memory-limit", "64KiB"],
        b"http://a/\n",
    );
    assert_eq!((run.code, run.stdout.as_str()), (0, "http://a/\n"));
}

/// A 1 MiB tmpfs as the spill directory: the disk fills, the run stops with
/// exit 2 and a sentence naming the directory, and `-o` is never created.
/// Mounting needs root (CI runs as root); elsewhere the test says it did
/// not run.
#[test]
fn a_full_disk_is_exit_2_with_a_sentence_and_no_output() {
    let small = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(small.path())
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("NOT RUN: mounting a tmpfs needs root");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let input = write_corpus(work.path());
    let out = work.path().join("out.txt");
    let temp_dir = small.path().to_str().unwrap();
    let run = urinorm(
        &[
            "dedup",
            &input,
            "-j",
            "1",
            "-o",
            out.to_str().unwrap(),
            "--memory-limit",
            "1M",
            "--temp-dir",
            temp_dir,
        ],
        b"",
    );
    let left = files_in(small.path());
    let _ = Command::new("umount").arg(small.path()).status();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("cannot spill to '{temp_dir}/urinorm-spill-"))
            && run.stderr.contains("needed in all")
            && run.stderr.contains("--temp-dir"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!out.exists(), "a partial output was put in place");
    assert_eq!(
        files_in(work.path()),
        ["corpus.txt"],
        "temporary output left"
    );
    assert!(left.is_empty(), "spill files left: {left:?}");
}

#[test]
fn ctrl_c_removes_the_spill_and_the_unfinished_output() {
    let spill_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args(["dedup", "-j", "1", "--memory-limit", "1M", "--temp-dir"])
        .arg(spill_dir.path())
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Enough lines to fill the set and spill, then stdin stays open: the
    // run waits for more, with its spill files on disk.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&corpus()).unwrap();
    wait_until("a spill file", || !files_in(spill_dir.path()).is_empty());
    assert!(
        files_in(work.path())
            .iter()
            .any(|e| e.starts_with(".urinorm-"))
    );
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(output.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&output.stderr).contains("interrupted"));
    assert!(files_in(spill_dir.path()).is_empty(), "spill files left");
    assert!(files_in(work.path()).is_empty(), "output files left");
}

/// A SIGKILL (or the OOM killer) runs no handler: the spill and the
/// unfinished output stay. The next run that writes there removes them,
/// and says so; a live run's are never touched.
#[test]
fn a_killed_runs_leftovers_are_removed_by_the_next_run() {
    let spill_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out.txt");
    let spilling = |stdin: Stdio| {
        Command::new(env!("CARGO_BIN_EXE_urinorm"))
            .args(["dedup", "-j", "1", "--memory-limit", "1M", "--temp-dir"])
            .arg(spill_dir.path())
            .arg("-o")
            .arg(&out)
            .stdin(stdin)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut killed = spilling(Stdio::piped());
    let mut stdin = killed.stdin.take().unwrap();
    stdin.write_all(&corpus()).unwrap();
    wait_until("a spill file", || !files_in(spill_dir.path()).is_empty());
    // A second run, alive, with its own spill and output beside them.
    let mut live = spilling(Stdio::piped());
    let mut live_stdin = live.stdin.take().unwrap();
    live_stdin.write_all(&corpus()).unwrap();
    wait_until("the live run's spill", || {
        files_in(spill_dir.path()).len() == 2
    });
    killed.kill().unwrap();
    killed.wait().unwrap();
    drop(stdin);
    assert_eq!(files_in(work.path()).len(), 2, "two unfinished outputs");
    // The next run, writing beside them, removes the killed run's only.
    let next = urinorm(
        &[
            "dedup",
            "--memory-limit",
            "1M",
            "--temp-dir",
            spill_dir.path().to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        b"http://a/\n",
    );
    assert_eq!(next.code, 0, "{}", next.stderr);
    let said: Vec<&str> = next
        .stderr
        .lines()
        .filter(|l| l.contains("that killed runs left"))
        .collect();
    assert_eq!(said.len(), 2, "{}", next.stderr);
    let live_pid = live.id().to_string();
    let spills = files_in(spill_dir.path());
    assert_eq!(spills.len(), 1, "{spills:?}");
    assert!(spills[0].contains(&live_pid), "{spills:?}");
    let outputs = files_in(work.path());
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert!(outputs.contains(&"out.txt".to_string()), "{outputs:?}");
    assert!(outputs.iter().any(|o| o.contains(&live_pid)), "{outputs:?}");
    // The live run ends as ever, and cleans up after itself.
    drop(live_stdin);
    assert!(live.wait().unwrap().success());
    assert!(files_in(spill_dir.path()).is_empty());
    assert_eq!(files_in(work.path()), ["out.txt"]);
}
