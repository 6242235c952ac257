//! The manifest: which runs make up the store's current state, the key
//! configuration they were made with, and the commit count. It is the one
//! file a commit replaces, atomically (write a temporary file, sync it,
//! rename it over the old one, sync the directory), so a store is always at
//! one commit or the next.
//!
//! ```text
//! urinorm seen store version 2
//! {"commit":3,"committed_at":1795000000,"config":{...},"next_run":4,"runs":[{"file":"0000000002.run","entries":812,"adds":790}]}
//! crc32 5f0a1c2e
//! ```
//!
//! The checksum covers the two lines above it. A run's `entries` are the
//! prints in its file; its `adds`, what it adds to the store's count of
//! keys (entries less the keys an older run also holds, admitted again
//! after they expired; a run of tombstones subtracts the keys it hides),
//! so that the store's count is their sum, whatever the runs share.
//! Version 1 (before keys had times) wrote `keys`, which is both: runs
//! then never shared a key. It is read, and written back as version 2.
//! Version 3 is a store that keeps budgets: `"sites":{"by":"host",
//! "names":N}` says what its runs' sites are (hosts or domains) and how
//! many bytes of its file of site names (`sites`) are committed; a
//! urinorm that knows no budgets refuses it rather than write runs
//! without sites into it.
//!
//! It knows the manifest's text; not what runs hold.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::{Config, StoreError};

/// The store format this urinorm writes (3 for a store that keeps
/// budgets); it reads version 1 too.
pub(crate) const VERSION: u32 = 2;
pub(crate) const VERSION_WITH_SITES: u32 = 3;

pub(crate) const FILE: &str = "MANIFEST";
const FIRST_LINE: &str = "urinorm seen store version ";

/// No manifest is larger: anything bigger is not one.
const MAX_BYTES: u64 = 16 << 20;

/// One live run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunEntry {
    pub(crate) id: u64,
    /// The prints in its file.
    pub(crate) entries: u64,
    /// What it adds to the store's count of keys.
    pub(crate) adds: i64,
}

impl RunEntry {
    /// The run's file name in the store's directory.
    pub(crate) fn file_name(&self) -> String {
        run_file_name(self.id)
    }
}

/// The file name of run `id`.
pub(crate) fn run_file_name(id: u64) -> String {
    format!("{id:010}.run")
}

/// The id of a run file name, when it is one.
pub(crate) fn run_id(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(".run")?;
    (digits.len() == 10 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A store's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Manifest {
    pub(crate) config: Config,
    /// Commits made so far.
    pub(crate) commit: u64,
    pub(crate) committed_at: Option<SystemTime>,
    /// The id the next run written gets.
    pub(crate) next_run: u64,
    /// The live runs, oldest first.
    pub(crate) runs: Vec<RunEntry>,
    /// What its runs' sites are, once it keeps budgets.
    pub(crate) sites: Option<Sites>,
}

/// A store's sites, as its manifest records them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sites {
    /// What a site is: `host` or `domain`.
    pub(crate) by: String,
    /// The bytes of the file of site names that are committed.
    pub(crate) names: u64,
}

impl Manifest {
    /// The manifest of an empty store.
    pub(crate) fn new(config: Config) -> Manifest {
        Manifest {
            config,
            commit: 0,
            committed_at: None,
            next_run: 1,
            runs: Vec::new(),
            sites: None,
        }
    }

    /// The distinct keys the store holds.
    pub(crate) fn keys(&self) -> u64 {
        self.runs.iter().map(|r| r.adds).sum::<i64>().max(0) as u64
    }

    fn to_text(&self) -> String {
        let runs: Vec<Value> = self
            .runs
            .iter()
            .map(|r| json!({"file": r.file_name(), "entries": r.entries, "adds": r.adds}))
            .collect();
        let committed_at = self.committed_at.map(|t| {
            t.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs()
        });
        let mut body = json!({
            "commit": self.commit,
            "committed_at": committed_at,
            "config": self.config.to_json(),
            "next_run": self.next_run,
            "runs": runs,
        });
        let version = match &self.sites {
            Some(sites) => {
                body["sites"] = json!({"by": sites.by, "names": sites.names});
                VERSION_WITH_SITES
            }
            None => VERSION,
        };
        let lines = format!("{FIRST_LINE}{version}\n{body}\n");
        let crc = crc32fast::hash(lines.as_bytes());
        format!("{lines}crc32 {crc:08x}\n")
    }

    /// Parses a manifest's bytes (from the file at `path`, named in errors).
    fn parse(bytes: &[u8], path: &Path) -> Result<Manifest, StoreError> {
        let damaged = |why: &str| StoreError::damaged(path, why);
        let Some(rest) = bytes.strip_prefix(FIRST_LINE.as_bytes()) else {
            return Err(StoreError::NotAStore {
                path: path.to_path_buf(),
                why: format!("its {FILE} is not a seen store's"),
            });
        };
        let text = std::str::from_utf8(rest).map_err(|_| damaged("is not text"))?;
        let (version, rest) = text
            .split_once('\n')
            .ok_or_else(|| damaged("is cut short"))?;
        let known = [1, VERSION, VERSION_WITH_SITES];
        let Some(version) = known.into_iter().find(|v| version == v.to_string()) else {
            return Err(StoreError::UnknownVersion {
                path: path.to_path_buf(),
                version: version.chars().take(20).collect(),
            });
        };
        let (body, rest) = rest
            .split_once('\n')
            .ok_or_else(|| damaged("is cut short"))?;
        let checked = &bytes[..bytes.len() - rest.len()];
        let crc = rest
            .strip_prefix("crc32 ")
            .and_then(|r| r.strip_suffix('\n'))
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .ok_or_else(|| damaged("is cut short (no checksum line)"))?;
        if crc32fast::hash(checked) != crc {
            return Err(damaged("has a checksum that does not match"));
        }
        let body: Value = serde_json::from_str(body).map_err(|_| damaged("is not valid JSON"))?;
        Manifest::from_json(&body, version).ok_or_else(|| damaged("lacks a field a manifest has"))
    }

    fn from_json(body: &Value, version: u32) -> Option<Manifest> {
        let runs = body["runs"]
            .as_array()?
            .iter()
            .map(|r| {
                let id = run_id(r["file"].as_str()?)?;
                let (entries, adds) = match version {
                    1 => (
                        r["keys"].as_u64()?,
                        i64::try_from(r["keys"].as_u64()?).ok()?,
                    ),
                    _ => (r["entries"].as_u64()?, r["adds"].as_i64()?),
                };
                Some(RunEntry { id, entries, adds })
            })
            .collect::<Option<Vec<_>>>()?;
        let committed_at = match &body["committed_at"] {
            Value::Null => None,
            at => Some(SystemTime::UNIX_EPOCH + Duration::from_secs(at.as_u64()?)),
        };
        let sites = match version {
            VERSION_WITH_SITES => Some(Sites {
                by: body["sites"]["by"].as_str()?.to_string(),
                names: body["sites"]["names"].as_u64()?,
            }),
            _ => None,
        };
        Some(Manifest {
            config: Config::from_json(&body["config"])?,
            commit: body["commit"].as_u64()?,
            committed_at,
            next_run: body["next_run"].as_u64()?,
            runs,
            sites,
        })
    }

    /// Reads the manifest of the store in `dir`; `None` when there is none.
    pub(crate) fn read(dir: &Path) -> Result<Option<Manifest>, StoreError> {
        let path = dir.join(FILE);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(&path, "open")(e)),
        };
        let len = file
            .metadata()
            .map_err(StoreError::io(&path, "read"))?
            .len();
        if len > MAX_BYTES {
            return Err(StoreError::NotAStore {
                path: path.clone(),
                why: format!("its {FILE} is far larger than a seen store's"),
            });
        }
        let mut bytes = Vec::with_capacity(len as usize);
        io::Read::read_to_end(&mut &file, &mut bytes).map_err(StoreError::io(&path, "read"))?;
        let manifest = Manifest::parse(&bytes, &path)?;
        let mut ids: Vec<u64> = manifest.runs.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|w| w[0] == w[1])
            || ids.last().is_some_and(|&id| id >= manifest.next_run)
        {
            return Err(StoreError::damaged(&path, "names its runs inconsistently"));
        }
        Ok(Some(manifest))
    }

    /// Replaces the manifest in `dir` atomically: a kill at any instant
    /// leaves the old one or this one.
    pub(crate) fn write(&self, dir: &Path) -> Result<(), StoreError> {
        let temp = dir.join(format!("{FILE}.tmp"));
        let written = File::create(&temp).and_then(|mut file| {
            file.write_all(self.to_text().as_bytes())?;
            file.sync_all()
        });
        written.map_err(StoreError::io(&temp, "write"))?;
        let path = dir.join(FILE);
        std::fs::rename(&temp, &path).map_err(StoreError::io(&path, "replace"))?;
        sync_dir(dir)
    }
}

/// Makes the directory's entries (renames, new files) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(StoreError::io(dir, "sync"))
}

/// Whether `name` is a file a store being made may hold before its first
/// manifest (its lock, temporary files), for telling one from another
/// directory.
pub(crate) fn is_store_file(name: &str) -> bool {
    name == super::lock::FILE || name == super::sites::NAMES_FILE || name.ends_with(".tmp")
}

/// The temporary name a run is written under before it goes live.
pub(crate) fn temp_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{}.tmp", run_file_name(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            commit: 3,
            committed_at: Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            next_run: 9,
            runs: vec![
                RunEntry {
                    id: 2,
                    entries: 812,
                    adds: 790,
                },
                RunEntry {
                    id: 8,
                    entries: 5,
                    adds: -5,
                },
            ],
            ..Manifest::new(Config::new([("rung", "scheme"), ("key", "canonical")]))
        }
    }

    #[test]
    fn round_trips_and_detects_every_flipped_byte() {
        let dir = tempfile::tempdir().unwrap();
        manifest().write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), Some(manifest()));
        let text = manifest().to_text();
        assert!(
            text.starts_with("urinorm seen store version 2\n{"),
            "{text}"
        );
        let path = Path::new("MANIFEST");
        for at in 0..text.len() {
            let mut bytes = text.clone().into_bytes();
            bytes[at] ^= 0x01;
            assert!(Manifest::parse(&bytes, path).is_err(), "byte {at} flipped");
            assert!(
                Manifest::parse(&text.as_bytes()[..at], path).is_err(),
                "cut at {at}"
            );
        }
    }

    #[test]
    fn a_store_that_keeps_budgets_is_version_3_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let sited = Manifest {
            sites: Some(Sites {
                by: "host".into(),
                names: 42,
            }),
            ..manifest()
        };
        sited.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), Some(sited.clone()));
        assert!(
            sited
                .to_text()
                .starts_with("urinorm seen store version 3\n")
        );
    }

    #[test]
    fn a_later_version_and_a_foreign_file_are_named_as_such() {
        let later = manifest().to_text().replace("version 2", "version 4");
        let e = Manifest::parse(later.as_bytes(), Path::new("M")).unwrap_err();
        assert!(e.to_string().contains("format version 4"), "{e}");
        let e = Manifest::parse(b"hello", Path::new("M")).unwrap_err();
        assert!(e.to_string().contains("not a seen store"), "{e}");
    }

    /// A store written before keys had times reads as it was: each run
    /// adds its keys.
    #[test]
    fn a_version_1_manifest_is_read() {
        let body = r#"{"commit":2,"committed_at":1795000000,"config":{"rung":"scheme"},"next_run":5,"runs":[{"file":"0000000004.run","keys":812}]}"#;
        let lines = format!("urinorm seen store version 1\n{body}\n");
        let text = format!("{lines}crc32 {:08x}\n", crc32fast::hash(lines.as_bytes()));
        let manifest = Manifest::parse(text.as_bytes(), Path::new("M")).unwrap();
        let entry = RunEntry {
            id: 4,
            entries: 812,
            adds: 812,
        };
        assert_eq!(manifest.runs, [entry]);
        assert_eq!(manifest.keys(), 812);
    }

    #[test]
    fn run_names_are_exactly_ten_digits() {
        assert_eq!(run_id("0000000042.run"), Some(42));
        for bad in [
            "42.run",
            "../0000000042.run",
            "000000004x.run",
            "0000000042.runs",
        ] {
            assert_eq!(run_id(bad), None, "{bad}");
        }
    }
}
