//! What a user may not write stays unwritten, and the run says so before
//! any work: a file being replaced by `-o` (as `sort -o` checks), a seen
//! store's directory. Run as another user where the tests run as root
//! (root may write anything), else as the user who may not write.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common::cli::urinorm;

/// The user `nobody`, which a root test process runs the binary as.
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Runs the binary with `args` and `stdin`, as `nobody` when the tests run
/// as root.
fn as_unprivileged(args: &[&str], stdin: &[u8]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_urinorm"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if is_root() {
        command.uid(NOBODY).gid(NOBODY);
    }
    let mut child = command.spawn().unwrap();
    // A run that refuses before any work may exit before it reads a byte:
    // the closed pipe is then its answer, which the exit code and stderr tell.
    if let Err(error) = child.stdin.take().unwrap().write_all(stdin) {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    child.wait_with_output().unwrap()
}

/// A directory anyone may write in (as `/tmp` without its sticky bit).
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    set_mode(dir.path(), 0o777);
    dir
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn o_refuses_to_replace_a_file_the_user_may_not_write() {
    let dir = open_dir();
    let kept = dir.path().join("rofile");
    std::fs::write(&kept, "not yours\n").unwrap();
    set_mode(&kept, 0o444);
    let before = std::fs::metadata(&kept).unwrap();
    let run = as_unprivileged(&["dedup", "-o", kept.to_str().unwrap()], b"http://a/\n");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "urinorm: cannot write '{}': permission denied\n",
            kept.display()
        )
    );
    let after = std::fs::metadata(&kept).unwrap();
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "not yours\n");
    assert_eq!((after.uid(), after.ino()), (before.uid(), before.ino()));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_store_directory_the_user_may_not_write_stops_the_run_before_any_output() {
    let dir = open_dir();
    let store = dir.path().join("store");
    let made = urinorm(
        &["dedup", "-q", "--seen", store.to_str().unwrap()],
        b"http://a/\n",
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    // Its files readable and its lock writable by all; the directory not.
    for entry in std::fs::read_dir(&store).unwrap() {
        set_mode(&entry.unwrap().path(), 0o666);
    }
    set_mode(&store, 0o555);
    let run = as_unprivileged(
        &["dedup", "--seen", store.to_str().unwrap()],
        b"http://b/\nhttp://c/\n",
    );
    set_mode(&store, 0o755);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(run.stdout.is_empty(), "written before the store failed");
    assert_eq!(
        stderr,
        format!(
            "urinorm: cannot write in '{}': permission denied\n",
            store.display()
        )
    );
}
