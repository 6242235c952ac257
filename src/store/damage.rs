//! The damage mark: a reader that finds a run damaged records it in the
//! store (`DAMAGED`: the run's file name and what is wrong with it), so
//! that every reader after it fails the same way (a one-key lookup that
//! reads no damaged block as much as a full scan) until the store is
//! salvaged ([`Store::salvage`](super::Store::salvage)) or the run's file
//! is replaced (restored from a backup: the mark names the file by its
//! size, time and inode, so it no longer applies). A reader that finds no
//! damage answers, as ever: every block it reads is checked, so its
//! answer is right.
//!
//! It knows one small file; not runs or how they are checked.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::StoreError;
use super::manifest::{self, Manifest};

pub(crate) const FILE: &str = "DAMAGED";

/// Records that the run file `run` is damaged, as `why` says. Best effort:
/// a reader that may not write the store fails all the same, unrecorded.
pub(crate) fn record(run: &Path, why: &str) {
    let (Some(dir), Some(name)) = (run.parent(), run.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    // A run being written (a temporary file) is no live run's damage.
    if manifest::run_id(name).is_none() {
        return;
    }
    let Some(identity) = identity(run) else {
        return;
    };
    let temp = dir.join(format!("{FILE}.{}.tmp", std::process::id()));
    let why = why.replace(['\n', '\t'], " ");
    let text = format!("{name}\t{identity}\t{why}\n");
    if std::fs::write(&temp, text).is_ok() && std::fs::rename(&temp, dir.join(FILE)).is_err() {
        let _ = std::fs::remove_file(&temp);
    }
}

/// The damage recorded in the store in `dir`, as the error its finder got,
/// if the run it names is one of `manifest`'s (else the mark is stale).
pub(crate) fn check(dir: &Path, manifest: &Manifest) -> Result<(), StoreError> {
    match recorded(dir, manifest) {
        Some((name, why)) => Err(StoreError::damaged(&dir.join(name), why)),
        None => Ok(()),
    }
}

/// Whether `name`, a file of the store in `dir`, is a mark no live run
/// answers to (for a writer to remove).
pub(crate) fn is_stale(dir: &Path, name: &str, manifest: &Manifest) -> bool {
    name == FILE && recorded(dir, manifest).is_none()
}

fn recorded(dir: &Path, manifest: &Manifest) -> Option<(String, String)> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    let mut fields = text.trim_end().splitn(3, '\t');
    let (name, recorded, why) = (fields.next()?, fields.next()?, fields.next()?);
    let live = manifest.runs.iter().any(|r| r.file_name() == name)
        && identity(&dir.join(name)).is_some_and(|now| now == recorded);
    live.then(|| (name.to_string(), why.to_string()))
}

/// A file's size, modification time and inode, as one word: what tells
/// the file the mark was made for from one put in its place.
fn identity(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let time = (meta.mtime(), meta.mtime_nsec());
    Some(format!(
        "{}:{}.{}:{}",
        meta.len(),
        time.0,
        time.1,
        meta.ino()
    ))
}

/// Removes the mark, once the store holds no damaged run.
pub(crate) fn clear(dir: &Path) -> Result<(), StoreError> {
    let path = dir.join(FILE);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(StoreError::io(&path, "remove")(e))
        }
        _ => Ok(()),
    }
}
