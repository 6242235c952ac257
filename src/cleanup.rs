//! Paths to remove if the process is stopped by a signal: temporary files
//! and directories register here while they exist, and the command's signal
//! handler calls [`remove_all`] before it exits. (On a normal return or an
//! error, their owners remove them as they are dropped.)
//!
//! It knows paths, not who made them or why.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A registration; dropping it takes the path off the list.
#[must_use = "the path is unregistered when this is dropped"]
pub struct Registered(PathBuf);

/// Puts `path` (a file or a directory) on the list.
pub fn register(path: &Path) -> Registered {
    lock().push(path.to_path_buf());
    Registered(path.to_path_buf())
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
/// handler, it has no one to report a failure to.
pub fn remove_all() {
    for path in lock().drain(..) {
        let _ = match path.is_dir() {
            true => std::fs::remove_dir_all(&path),
            false => std::fs::remove_file(&path),
        };
    }
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
        let dropped = register(&kept);
        let _held = register(&removed);
        drop(dropped);
        remove_all();
        assert!(kept.exists());
        assert!(!removed.exists());
    }
}
