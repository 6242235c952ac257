//! Paths to remove if the process is stopped by a signal: temporary files
//! and directories register here while they exist, and the command's signal
//! handler calls [`remove_all`] before it exits. (On a normal return or an
//! error, their owners remove them as they are dropped.)
//!
//! A run that must finish its work when interrupted (a live seen store's
//! last commit) defers interrupts instead ([`defer_interrupts`]): the
//! handler then only notes the interrupt ([`interrupt`]), which the engine
//! sees as the end of its input ([`interrupted`]).
//!
//!
//! Every temporary name holds the pid of the process that made it, and
//! its maker holds a lock on it: a later run removes what a killed one
//! left ([`sweep`]), never what a live one is writing.
//!
//! It knows paths and one flag, not who made them or why.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static DEFERRING: AtomicUsize = AtomicUsize::new(0);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// While held, an interrupt is noted, not acted on.
#[must_use = "interrupts are deferred only while this is held"]
pub struct Deferred(());

/// Defers interrupts until the guard is dropped.
pub fn defer_interrupts() -> Deferred {
    DEFERRING.fetch_add(1, Ordering::SeqCst);
    Deferred(())
}

impl Drop for Deferred {
    fn drop(&mut self) {
        DEFERRING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// For the signal handler: notes the interrupt and says whether it is
/// deferred (the run ends on its own); when it is not, or when it was
/// noted once already (asked twice), the handler stops the process.
pub fn interrupt() -> bool {
    let again = INTERRUPTED.swap(true, Ordering::SeqCst);
    DEFERRING.load(Ordering::SeqCst) > 0 && !again
}

/// Whether an interrupt was noted: a run with interrupts deferred takes it
/// as the end of its input.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// A registration; dropping it takes the path off the list.
#[must_use = "the path is unregistered when this is dropped"]
pub struct Registered(PathBuf);

/// Makes a temporary file or directory with `make` and puts its path (as
/// `path` finds it) on the list, both under the list's lock: an interrupt
/// removes it or comes before it exists, never between the two.
pub fn create<T>(
    make: impl FnOnce() -> io::Result<T>,
    path: impl FnOnce(&T) -> &Path,
) -> io::Result<(T, Registered)> {
    let mut paths = lock();
    let made = make()?;
    let path = path(&made).to_path_buf();
    paths.push(path.clone());
    Ok((made, Registered(path)))
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut paths = lock();
        if let Some(at) = paths.iter().rposition(|p| *p == self.0) {
            paths.swap_remove(at);
        }
    }
}

/// Removes every registered path, as far as it can: called from a signal
/// handler, it has no one to report a failure to. The list stays locked
/// while the result is held, so that no thread still running creates and
/// registers a path after it (the handler exits holding it).
pub fn remove_all() -> Closed {
    let mut paths = lock();
    for path in paths.drain(..) {
        remove(&path);
    }
    Closed { _paths: paths }
}

/// The list, locked by [`remove_all`].
#[must_use = "new paths are kept off the list only while this is held"]
pub struct Closed {
    _paths: MutexGuard<'static, Vec<PathBuf>>,
}

fn remove(path: &Path) {
    if !path.is_dir() {
        let _ = std::fs::remove_file(path);
        return;
    }
    // Renamed away first: threads still running name the directory by its
    // path, so none can create a file in it while it is being removed
    // (which would leave the directory behind, not empty).
    let mut away = path.as_os_str().to_owned();
    away.push(".removing");
    let away = PathBuf::from(away);
    let target = match std::fs::rename(path, &away) {
        Ok(()) => &away,
        Err(_) => path,
    };
    let _ = std::fs::remove_dir_all(target);
}

/// The kinds of temporary path urinorm makes, each named
/// `{stem}{pid}-{random}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Temporary {
    /// An output being written beside the file it will replace (`-o`).
    Output,
    /// A directory made and removed at once, to learn that files can be made.
    Probe,
    /// A directory of spilled keys, past the memory limit.
    Spill,
}

impl Temporary {
    const ALL: [Temporary; 3] = [Temporary::Output, Temporary::Probe, Temporary::Spill];

    fn stem(self) -> &'static str {
        match self {
            Temporary::Output => ".urinorm-",
            Temporary::Probe => ".urinorm-probe-",
            Temporary::Spill => "urinorm-spill-",
        }
    }

    /// The start of a name of this kind made by this process.
    pub fn prefix(self) -> String {
        format!("{}{}-", self.stem(), std::process::id())
    }

    /// The process that made a path named `name` of this kind.
    fn maker(self, name: &str) -> Option<u32> {
        let (pid, _) = name.strip_prefix(self.stem())?.split_once('-')?;
        match pid.bytes().all(|b| b.is_ascii_digit()) {
            true => pid.parse().ok(),
            false => None,
        }
    }
}

/// Takes the lock that tells a sweep the path at `path` (a file or a
/// directory) is in use; it lasts as long as the returned file is open.
/// Where locks are not supported, the pid in the name alone tells.
pub fn hold(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    let _ = file.try_lock();
    Ok(file)
}

/// What a [`sweep`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub paths: u64,
    pub bytes: u64,
}

/// Removes from `dir` the temporary paths of runs that were killed (a
/// SIGKILL, the OOM killer): those whose maker is no longer running and
/// whose lock no one holds. A path that cannot be judged or removed is
/// left as it is.
pub fn sweep(dir: &Path) -> Swept {
    let mut swept = Swept::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return swept;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(maker) = name
            .to_str()
            .and_then(|name| Temporary::ALL.iter().find_map(|t| t.maker(name)))
        else {
            continue;
        };
        if maker == std::process::id() || !gone(maker) {
            continue;
        }
        let path = entry.path();
        // A held lock is a live maker that this process cannot see (in
        // another pid namespace, say).
        let free = File::open(&path).is_ok_and(|f| f.try_lock().is_ok());
        if free {
            let bytes = bytes_under(&path);
            remove(&path);
            if std::fs::symlink_metadata(&path).is_err() {
                swept.paths += 1;
                swept.bytes += bytes;
            }
        }
    }
    swept
}

/// Whether process `pid` has ended; where that cannot be known (no
/// `/proc`), it is taken to be running.
fn gone(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

/// The bytes of a file, or of the files in a directory, all levels.
fn bytes_under(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| {
        entries.flatten().map(|e| bytes_under(&e.path())).sum()
    })
}

/// The list, even if a thread panicked while holding it (it stays a list).
fn lock() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PATHS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_removes_what_dead_makers_left_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, b"12345").unwrap();
            path
        };
        // No process has a pid this large (the kernel's limit is 2^22).
        let dead = u32::MAX - 1;
        let left = file(&format!(".urinorm-{dead}-abc"));
        let spill = dir.path().join(format!("urinorm-spill-{dead}-xyz"));
        std::fs::create_dir(&spill).unwrap();
        std::fs::write(spill.join("p0"), b"123").unwrap();
        let probe = dir.path().join(format!(".urinorm-probe-{dead}-q"));
        std::fs::create_dir(&probe).unwrap();
        // This process's own, a live one's, a locked one's, the user's.
        let own = file(&Temporary::Output.prefix());
        let live = file(".urinorm-1-abc");
        let locked = file(&format!(".urinorm-{}-held", dead - 1));
        let _held = hold(&locked).unwrap();
        let users = [
            file(".urinorm-notes"),
            file("urinorm-spill-x-1"),
            file("a.txt"),
        ];
        let swept = sweep(dir.path());
        assert_eq!(swept, Swept { paths: 3, bytes: 8 });
        assert!(!left.exists() && !spill.exists() && !probe.exists());
        for kept in [&own, &live, &locked].into_iter().chain(&users) {
            assert!(kept.exists(), "{}", kept.display());
        }
    }

    #[test]
    fn removes_what_is_registered_and_forgets_what_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept");
        let removed = dir.path().join("removed");
        std::fs::write(&kept, b"x").unwrap();
        std::fs::create_dir(&removed).unwrap();
        std::fs::write(removed.join("inner"), b"x").unwrap();
        let (_, dropped) = create(|| Ok(kept.clone()), |p| p).unwrap();
        let (_, _held) = create(|| Ok(removed.clone()), |p| p).unwrap();
        drop(dropped);
        drop(remove_all());
        assert!(kept.exists());
        assert!(!removed.exists());
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "nothing renamed is left"
        );
    }
}
