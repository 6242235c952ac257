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
//! It knows paths and one flag, not who made them or why.

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
