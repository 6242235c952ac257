//! The writer lock: one process at a time may commit to a store. An
//! advisory lock (`flock`) on the store's `LOCK` file, which the kernel
//! releases when its holder exits however it exits, so a killed writer
//! never leaves the store locked; the holder writes its pid into the file,
//! and a service the address it serves on, for the message a second
//! writer gets.
//!
//! It knows the lock file; not what the lock protects.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use super::StoreError;

pub(crate) const FILE: &str = "LOCK";

/// A held writer lock; dropping it releases the lock.
#[derive(Debug)]
pub(crate) struct WriterLock {
    file: File,
    path: std::path::PathBuf,
}

impl WriterLock {
    /// Takes the lock of the store in `dir`; when another process holds it,
    /// waits for it with `wait`, else fails naming the holder.
    pub(crate) fn acquire(dir: &Path, wait: bool) -> Result<WriterLock, StoreError> {
        let path = dir.join(FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(StoreError::io(&path, "open"))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) if wait => {
                file.lock().map_err(StoreError::io(&path, "lock"))?
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let mut lines = text.lines();
                return Err(StoreError::Locked {
                    dir: dir.to_path_buf(),
                    holder: lines.next().and_then(|pid| pid.trim().parse().ok()),
                    serving: lines
                        .next()
                        .and_then(|line| line.strip_prefix(SERVING))
                        .map(str::to_string),
                });
            }
            Err(TryLockError::Error(e)) => return Err(StoreError::io(&path, "lock")(e)),
        }
        let noted = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        noted.map_err(StoreError::io(&path, "write"))?;
        Ok(WriterLock { file, path })
    }

    /// Notes in the lock file that its holder serves the store at `url`.
    pub(crate) fn note_serving(&self, url: &str) -> Result<(), StoreError> {
        let mut file = &self.file;
        let noted = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| write!(file, "{}\n{SERVING}{url}\n", std::process::id()));
        noted.map_err(StoreError::io(&self.path, "write"))
    }
}

/// What the lock file's second line starts with when its holder serves.
const SERVING: &str = "serving ";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let held = WriterLock::acquire(dir.path(), false).unwrap();
        let e = WriterLock::acquire(dir.path(), false).unwrap_err();
        assert!(
            e.to_string().contains(&format!(
                "this process (process {}): a writer opened on it earlier is still open",
                std::process::id()
            )),
            "{e}"
        );
        drop(held);
        WriterLock::acquire(dir.path(), false).unwrap();
    }
}
