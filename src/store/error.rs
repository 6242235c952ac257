//! Why a seen store could not be opened, read or written: one sentence
//! each, naming the store's file at fault, so a damaged store is never taken
//! for an empty one.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::Config;
use crate::escape::escape_str;

/// What went wrong with a seen store.
#[derive(Debug)]
pub enum StoreError {
    /// A file of the store could not be read or written.
    Io {
        path: PathBuf,
        /// What was being done: "read", "write", "create", ...
        action: &'static str,
        source: io::Error,
    },
    /// A file of the store does not hold what the store wrote there: cut
    /// short, a checksum that does not match, out of order.
    Damaged { path: PathBuf, why: String },
    /// The directory holds other things, not a store.
    NotAStore { path: PathBuf, why: String },
    /// A store written by a later urinorm, in a format this one cannot read.
    UnknownVersion { path: PathBuf, version: String },
    /// The store keeps sites of another kind (hosts, domains) than a
    /// budget asked counts.
    SitesMismatch {
        dir: PathBuf,
        kept: String,
        wanted: String,
    },
    /// Opening for reading only, there is no store at all.
    Missing { dir: PathBuf },
    /// The store's keys were made with other options than the run's.
    ConfigMismatch {
        dir: PathBuf,
        stored: Config,
        wanted: Config,
    },
    /// Another process holds the store's writer lock (`serving`: the
    /// address of the `urinorm serve` that does).
    Locked {
        dir: PathBuf,
        holder: Option<u32>,
        serving: Option<String>,
    },
    /// Writing to a store opened for reading only.
    ReadOnly { dir: PathBuf },
    /// More keys in one batch than the store takes at once.
    TooLarge { what: &'static str },
    /// A history (`seen export`, `seen import`) that cannot be written or
    /// read as one: `why` is a sentence.
    History { path: PathBuf, why: String },
}

impl StoreError {
    pub(crate) fn io(path: &Path, action: &'static str) -> impl FnOnce(io::Error) -> StoreError {
        let path = path.to_path_buf();
        move |source| StoreError::Io {
            path,
            action,
            source,
        }
    }

    pub(crate) fn damaged(path: &Path, why: impl Into<String>) -> StoreError {
        StoreError::Damaged {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }
}

/// A path as the user reads it, control bytes escaped.
fn shown(path: &Path) -> String {
    escape_str(&path.display().to_string())
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Io {
                path,
                action,
                source,
            } => write!(
                f,
                "cannot {action} '{}': {}",
                shown(path),
                crate::sys::os_error::Reason(source)
            ),
            StoreError::Damaged { path, why } => write!(
                f,
                "the seen store is damaged: '{}' {why}; `urinorm seen salvage '{}'` rebuilds it from its intact blocks (and says how many keys are lost), or restore it from a backup",
                shown(path),
                shown(path.parent().unwrap_or(Path::new(".")))
            ),
            StoreError::NotAStore { path, why } => {
                write!(f, "'{}' is not a seen store: {why}", shown(path))
            }
            StoreError::UnknownVersion { path, version } => write!(
                f,
                "'{}' is a seen store of format version {}, which this urinorm cannot read (it reads versions 1 to {})",
                shown(path),
                escape_str(version),
                super::manifest::VERSION_WITH_SITES
            ),
            StoreError::SitesMismatch { dir, kept, wanted } => write!(
                f,
                "the seen store '{}' counts its budgets by {kept}: a budget per {wanted} cannot use it (give its budget by {kept}, or a new store)",
                shown(dir)
            ),
            StoreError::Missing { dir } => {
                write!(f, "there is no seen store at '{}'", shown(dir))
            }
            StoreError::ConfigMismatch {
                dir,
                stored,
                wanted,
            } => {
                write!(
                    f,
                    "the seen store '{}' holds keys made with other settings than this run's (",
                    shown(dir)
                )?;
                // Only what differs: the whole lists are long, and the same.
                for (i, name) in stored.differing(wanted).into_iter().enumerate() {
                    let value = |config: &Config| {
                        config.get(name).map_or("(none)".into(), |v| {
                            crate::escape::escape(v.as_bytes(), usize::MAX)
                        })
                    };
                    let sep = if i == 0 { "" } else { "; " };
                    write!(
                        f,
                        "{sep}{name}: the store's {}, this run's {}",
                        value(stored),
                        value(wanted)
                    )?;
                }
                f.write_str("): keys made differently cannot be compared (use the store's options, or another store)")
            }
            StoreError::Locked {
                dir,
                holder,
                serving,
            } => {
                write!(f, "the seen store '{}' is being written by ", shown(dir))?;
                match holder {
                    // The lock is per open file, not per process: a writer
                    // this process opened earlier and has not closed.
                    Some(pid) if *pid == std::process::id() => write!(
                        f,
                        "this process (process {pid}): a writer opened on it earlier is still open; close it first"
                    )?,
                    Some(pid) => write!(f, "process {pid}")?,
                    None => f.write_str("another process")?,
                }
                match serving {
                    Some(url) => write!(f, ", `urinorm serve` at {}", escape_str(url)),
                    None => Ok(()),
                }
            }
            StoreError::ReadOnly { dir } => write!(
                f,
                "the seen store '{}' was opened for reading only",
                shown(dir)
            ),
            StoreError::TooLarge { what } => write!(
                f,
                "a batch with {what} cannot be checked against a seen store at once; split it into smaller batches"
            ),
            StoreError::History { path, why } => write!(f, "'{}': {why}", shown(path)),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StoreError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
