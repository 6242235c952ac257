//! A store's history as Parquet, for the tools past one process: every key
//! the store holds, with the time it was admitted, as a table Spark, DuckDB
//! and pyarrow read ([`Store::export_history`]), and such tables read back
//! into a store ([`Store::import_history`]).
//!
//! The layout, which `scripts/spark_frontier.py` reads and appends to:
//!
//! ```text
//! fingerprint  BYTE_ARRAY, 16 bytes   the key's fingerprint, big-endian, as the store keeps it
//! admitted     INT64 TIMESTAMP(MICROS, UTC)  when the commit that admitted it was made
//! site         INT64, nullable        the key's site print ([`site_print`](super::site_print), as signed), in a store that keeps budgets
//! site_name    STRING, nullable       that site's name (its host or domain)
//! ```
//!
//! A history is a directory of Parquet files (a Spark dataset: others may
//! add part files beside ours) with `_urinorm.json`, the key configuration
//! its keys were made with; each exported file also carries it in its
//! footer, under `urinorm.config`, and what its sites are (`host`,
//! `domain`) under `urinorm.sites` (and `sites` in `_urinorm.json`):
//! an import into a store keeps them, so budgets go on. Files whose names start with `_` or `.`
//! are not data, as Spark has it. An import reads the fingerprint as bytes
//! of any binary type and the time in any unit; a row without a time is
//! admitted at the import's.
//!
//! It knows the store's entries, Parquet and the configuration's text; not
//! URIs, lines or the pipeline.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt64Type};
use arrow_array::types::{
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use serde_json::json;

use super::manifest::sync_dir;
use super::merge::merge_runs;
use super::{Config, Entry, Holding, NO_SITE, Probe, SiteNames, Staging, Stamp, Store, StoreError};

/// The columns of a history.
const FINGERPRINT: &str = "fingerprint";
const ADMITTED: &str = "admitted";
const SITE: &str = "site";
const SITE_NAME: &str = "site_name";
/// The footer key and the file that hold a history's key configuration,
/// and the footer key of what its sites are.
const CONFIG_KEY: &str = "urinorm.config";
const SITES_KEY: &str = "urinorm.sites";
const CONFIG_FILE: &str = "_urinorm.json";

/// Rows a row group holds: about 24 MiB of column data, which is what the
/// writer buffers.
const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows an exported file holds at most (about 1.6 GB): a history of 10^9
/// keys is 15 files, which a Spark job reads as many tasks.
const FILE_ROWS: u64 = 1 << 26;
/// Rows handed to the writer at once.
const BATCH_ROWS: usize = 1 << 16;
/// Rows an import commits at once: 4M rows take 128 MiB (32 bytes each,
/// looked up in place), whatever the history's size; each is one commit.
const IMPORT_ENTRIES: usize = 1 << 22;

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exported {
    /// Keys written: every key the store holds, one row each.
    pub keys: u64,
    /// The Parquet files written, in order.
    pub files: Vec<PathBuf>,
    /// Their bytes, all together.
    pub bytes: u64,
}

/// What an import did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Rows read.
    pub rows: u64,
    /// Keys admitted: rows of keys the store did not hold (a key in several
    /// rows counts once, with its latest time).
    pub admitted: u64,
    /// Keys the store held with an earlier time, given the history's (a
    /// recrawl elsewhere: admitted again, as an expired key is).
    pub renewed: u64,
    /// Rows of keys the store held with the same time or a later one, left
    /// as they were, and rows repeating a key.
    pub held: u64,
    /// Rows with no time, admitted at the import's.
    pub untimed: u64,
}

impl Store {
    /// Writes every key the store holds, with the time it was admitted,
    /// as a history in `dest`, a directory that must not exist yet: written
    /// beside it under a temporary name, each file synced, then renamed
    /// into place, so a kill leaves no history or a whole one. Reads the
    /// store's runs once, a block at a time; memory is a row group.
    ///
    /// ```
    /// use urinorm::store::{Access, Config, Staging, Store};
    /// let dir = tempfile::tempdir()?;
    /// let config = Config::new([("rung", "scheme")]);
    /// let mut store = Store::open(&dir.path().join("store"), &config, Access::Write { wait: false })?;
    /// store.stage([1u128, 5, 9].into_iter(), Staging::Admit { renewed: 0 })?;
    /// store.publish()?;
    /// let history = dir.path().join("history");
    /// assert_eq!(store.export_history(&history)?.keys, 3);
    /// let mut copy = Store::open(&dir.path().join("copy"), &config, Access::Write { wait: false })?;
    /// let files = urinorm::store::history_files(&[history])?;
    /// assert_eq!(copy.import_history(&files)?.admitted, 3);
    /// assert_eq!(copy.keys(), 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn export_history(&self, dest: &Path) -> Result<Exported, StoreError> {
        if dest.exists() {
            return Err(history_error(
                dest,
                "already exists: an export writes a new history (name one that does not exist)",
            ));
        }
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".urinorm-export-")
            .tempdir_in(parent)
            .map_err(StoreError::io(parent, "create a directory in"))?;
        let mut files = FileWriter::new(temp.path(), &self.manifest.config, self.sites());
        let mut rows = Rows::default();
        let names = self.site_names()?;
        merge_runs(&self.runs, |entry| {
            // A tombstone says the key is not held: it has no row.
            if entry.stamp.is_forgotten() {
                return Ok(());
            }
            rows.push(entry, &names);
            if rows.len() == BATCH_ROWS {
                files.write(&rows.take())?;
            }
            Ok(())
        })?;
        files.write(&rows.take())?;
        let written = files.finish()?;
        let sidecar = temp.path().join(CONFIG_FILE);
        let about = json!({
            "format": 1,
            "config": self.manifest.config.to_json(),
            "keys": written.keys,
            "sites": self.sites(),
            "exported_from": self.dir.display().to_string(),
        });
        write_synced(&sidecar, about.to_string().as_bytes())?;
        sync_dir(temp.path())?;
        let temp = temp.keep();
        std::fs::rename(&temp, dest).map_err(StoreError::io(dest, "rename a history into"))?;
        sync_dir(parent)?;
        Ok(Exported {
            files: written
                .files
                .iter()
                .map(|f| dest.join(f.file_name().expect("a file name")))
                .collect(),
            ..written
        })
    }

    /// Admits the keys of history `files` ([`history_files`]) that the
    /// store does not hold, each with its time of admission, and gives a
    /// key it holds the history's time when that is later (the latest
    /// admission decides, as in the store). Commits every few million rows
    /// (each commit crash-safe, as every commit is; a kill leaves the
    /// commits made, and the same import run again admits the rest). The
    /// caller checks the files' configuration against the store's
    /// ([`history_config`]).
    pub fn import_history(&mut self, files: &[PathBuf]) -> Result<Imported, StoreError> {
        self.writable()?;
        for file in files {
            if let Some(by) = sites_of(file)? {
                self.keep_sites(&by)?;
            }
        }
        let now = self.clock.now();
        let mut imported = Imported::default();
        let mut batch: Vec<Row> = Vec::new();
        let mut names = Names::default();
        let sites = self.sites().is_some();
        for file in files {
            read_history(file, |mut row, name| {
                imported.rows += 1;
                if row.stamp == Stamp::FORGOTTEN {
                    imported.untimed += 1;
                    row.stamp = now;
                }
                if !sites {
                    row.site = NO_SITE;
                } else if let Some(name) = name {
                    names.note(row.site, name);
                }
                batch.push(row);
                if batch.len() == IMPORT_ENTRIES {
                    self.admit_rows(&mut batch, &mut names, &mut imported)?;
                }
                Ok(())
            })?;
        }
        self.admit_rows(&mut batch, &mut names, &mut imported)?;
        Ok(imported)
    }

    /// Commits the rows of `batch` whose keys the store does not hold, or
    /// holds with an earlier time (renewed, as a key admitted again is):
    /// each key once, with its latest time. Empties `batch`.
    fn admit_rows(
        &mut self,
        batch: &mut Vec<Row>,
        names: &mut Names,
        imported: &mut Imported,
    ) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        // Latest first among equal prints, so that the one kept is it.
        batch.sort_unstable_by(|a, b| a.print.cmp(&b.print).then(b.stamp.cmp(&a.stamp)));
        let rows = batch.len() as u64;
        batch.dedup_by_key(|row| row.print);
        self.lookup(batch)?;
        let later = |row: &&Row| row.stored.is_none_or(|stored| stored < row.stamp);
        let renewed = batch
            .iter()
            .filter(later)
            .filter(|row| row.stored.is_some())
            .count() as u64;
        let entries = batch.iter().filter(later).map(|row| Entry {
            print: row.print,
            stamp: row.stamp,
            site: row.site,
        });
        let written = self.stage_entries(entries, Staging::Admit { renewed })?;
        self.name_sites(names.take_new(self)?);
        self.publish()?;
        imported.admitted += written - renewed;
        imported.renewed += renewed;
        imported.held += rows - written;
        batch.clear();
        Ok(())
    }
}

/// A row of a history being imported: its key's print, time (a
/// tombstone's when it has none) and site, and the time the store holds
/// the key with, once looked up.
struct Row {
    print: u128,
    stamp: Stamp,
    site: u64,
    stored: Option<Stamp>,
}

impl Probe for Row {
    fn print(&self) -> u128 {
        self.print
    }

    fn found(&mut self, entry: Entry, _: Holding) {
        // The newest run's entry comes last: a tombstone there hides the key.
        self.stored = (!entry.stamp.is_forgotten()).then_some(entry.stamp);
    }
}

/// The site names an import has read and not yet committed.
#[derive(Default)]
struct Names {
    waiting: SiteNames,
    /// Of the store's, the names known (read once).
    known: Option<SiteNames>,
}

impl Names {
    fn note(&mut self, site: u64, name: &str) {
        if site != NO_SITE {
            self.waiting
                .entry(site)
                .or_insert_with(|| name.as_bytes().to_vec());
        }
    }

    /// The names waiting that `store` has not, for its next commit.
    fn take_new(&mut self, store: &Store) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        if self.waiting.is_empty() {
            return Ok(Vec::new());
        }
        let known = match &mut self.known {
            Some(known) => known,
            None => self.known.insert(store.site_names()?),
        };
        let new: Vec<_> = self
            .waiting
            .drain()
            .filter(|(site, _)| !known.contains_key(site))
            .collect();
        known.extend(new.iter().cloned());
        Ok(new)
    }
}

/// The Parquet data files of `paths`: a file as it is, a directory's
/// files (sorted by name, those whose names start with `_` or `.` left
/// out, as Spark leaves them out), without descending further.
pub fn history_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, StoreError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(StoreError::io(path, "read the directory"))?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                !name.starts_with('_') && !name.starts_with('.')
            })
            .map(|e| e.path())
            .collect();
        if found.is_empty() {
            return Err(history_error(path, "holds no Parquet file"));
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// The key configuration a history records (each file's footer, or the
/// `_urinorm.json` of its directory), one for all; `None` when none of
/// `files` records one (a history Spark wrote from nothing). Files that
/// disagree are refused.
pub fn history_config(files: &[PathBuf]) -> Result<Option<Config>, StoreError> {
    let mut found: Option<(Config, &PathBuf)> = None;
    for file in files {
        let Some(config) = config_of(file)? else {
            continue;
        };
        match &found {
            Some((first, at)) if *first != config => {
                return Err(history_error(
                    file,
                    format!(
                        "records keys made with other settings ({config}) than '{}' does ({first}): keys made differently cannot go in one store",
                        crate::escape::escape_str(&at.display().to_string())
                    ),
                ));
            }
            Some(_) => {}
            None => found = Some((config, file)),
        }
    }
    Ok(found.map(|(config, _)| config))
}

/// The configuration `file` records: in its footer, else in its
/// directory's `_urinorm.json`.
fn config_of(file: &Path) -> Result<Option<Config>, StoreError> {
    if let Some(text) = footer_value(file, CONFIG_KEY)? {
        return parse_config(file, &text).map(Some);
    }
    match sidecar_of(file)? {
        Some((sidecar, about)) => parse_config(&sidecar, &about["config"].to_string()).map(Some),
        None => Ok(None),
    }
}

/// What the sites of `file` are (`host`, `domain`), as its footer or its
/// directory's `_urinorm.json` records; `None` when it has none.
fn sites_of(file: &Path) -> Result<Option<String>, StoreError> {
    if let Some(by) = footer_value(file, SITES_KEY)? {
        return Ok(Some(by));
    }
    Ok(sidecar_of(file)?.and_then(|(_, about)| about["sites"].as_str().map(str::to_string)))
}

/// The value of footer key `key` of `file`.
fn footer_value(file: &Path, key: &str) -> Result<Option<String>, StoreError> {
    Ok(reader_of(file)?
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|kv| kv.key == key))
        .and_then(|kv| kv.value.clone()))
}

/// The `_urinorm.json` of `file`'s directory, read, if there is one.
fn sidecar_of(file: &Path) -> Result<Option<(PathBuf, serde_json::Value)>, StoreError> {
    let sidecar = file.parent().unwrap_or(Path::new(".")).join(CONFIG_FILE);
    match std::fs::read_to_string(&sidecar) {
        Ok(text) => {
            let about: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| history_error(&sidecar, format!("is not JSON: {e}")))?;
            Ok(Some((sidecar, about)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(&sidecar, "read")(e)),
    }
}

fn parse_config(path: &Path, text: &str) -> Result<Config, StoreError> {
    serde_json::from_str(text)
        .ok()
        .and_then(|value| Config::from_json(&value))
        .ok_or_else(|| {
            history_error(
                path,
                "records a key configuration that is not an object of settings",
            )
        })
}

/// The Parquet reader of `file`, its footer read.
fn reader_of(file: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>, StoreError> {
    let opened = File::open(file).map_err(StoreError::io(file, "open"))?;
    contained(file, || {
        ParquetRecordBatchReaderBuilder::try_new(opened).map_err(|e| not_parquet(file, &e))
    })
}

/// Calls `each` with every row of history `file` (its stamp a tombstone's
/// for a row without a time, its site [`NO_SITE`] for one without) and
/// its site's name. Reads a batch of rows at a time.
fn read_history(
    file: &Path,
    mut each: impl FnMut(Row, Option<&str>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let builder = reader_of(file)?;
    let schema = builder.schema().clone();
    let column = |name: &str| schema.index_of(name).ok();
    let Some(print_at) = column(FINGERPRINT) else {
        return Err(history_error(
            file,
            format!(
                "has no column '{FINGERPRINT}' (a history's columns are '{FINGERPRINT}' and '{ADMITTED}')"
            ),
        ));
    };
    let optional = [ADMITTED, SITE, SITE_NAME].map(column);
    let wanted: Vec<usize> = std::iter::once(print_at)
        .chain(optional.into_iter().flatten())
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    let mut reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| not_parquet(file, &e))?;
    let mut row_number = 0u64;
    // Only the reader is contained: `each` (which commits) is ours.
    while let Some(batch) = contained(file, || Ok(reader.next()))? {
        let batch = batch.map_err(|e| history_error(file, format!("cannot be read: {e}")))?;
        // Projected columns keep the file's order.
        let prints = batch.column_by_name(FINGERPRINT).expect("projected");
        let times = batch.column_by_name(ADMITTED);
        let sites = batch.column_by_name(SITE);
        let names = batch
            .column_by_name(SITE_NAME)
            .map(|n| n.as_string_opt::<i32>());
        for i in 0..batch.num_rows() {
            let at = |why: String| history_error(file, format!("row {}: {why}", row_number + 1));
            let print = print_of(prints, i).map_err(at)?;
            let stamp = match times {
                Some(times) => stamp_of(times, i).map_err(at)?,
                None => None,
            };
            let site = match sites {
                Some(sites) => site_of(sites, i).map_err(at)?,
                None => NO_SITE,
            };
            let name = names
                .flatten()
                .filter(|n| !n.is_null(i))
                .map(|n| n.value(i));
            let row = Row {
                print,
                stamp: stamp.unwrap_or(Stamp::FORGOTTEN),
                site,
                stored: None,
            };
            each(row, name)?;
            row_number += 1;
        }
    }
    Ok(())
}

/// Row `i`'s fingerprint: 16 bytes of any binary column.
fn print_of(column: &ArrayRef, i: usize) -> Result<u128, String> {
    if column.is_null(i) {
        return Err(format!("'{FINGERPRINT}' is null"));
    }
    let bytes = match column.data_type() {
        DataType::Binary => column.as_binary::<i32>().value(i),
        DataType::LargeBinary => column.as_binary::<i64>().value(i),
        DataType::BinaryView => column.as_binary_view().value(i),
        DataType::FixedSizeBinary(_) => column.as_fixed_size_binary().value(i),
        other => return Err(format!("'{FINGERPRINT}' is of type {other}, not bytes")),
    };
    let bytes: [u8; 16] = bytes
        .try_into()
        .map_err(|_| format!("'{FINGERPRINT}' has {} bytes, not 16", bytes.len()))?;
    Ok(u128::from_be_bytes(bytes))
}

/// Row `i`'s site print, of a 64-bit integer column; [`NO_SITE`] when null.
fn site_of(column: &ArrayRef, i: usize) -> Result<u64, String> {
    if column.is_null(i) {
        return Ok(NO_SITE);
    }
    match column.data_type() {
        DataType::Int64 => Ok(column.as_primitive::<Int64Type>().value(i) as u64),
        DataType::UInt64 => Ok(column.as_primitive::<UInt64Type>().value(i)),
        other => Err(format!("'{SITE}' is of type {other}, not a 64-bit integer")),
    }
}

/// Row `i`'s time of admission, in whole seconds; `None` when null.
fn stamp_of(column: &ArrayRef, i: usize) -> Result<Option<Stamp>, String> {
    if column.is_null(i) {
        return Ok(None);
    }
    let (value, per_second) = match column.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => {
            (column.as_primitive::<TimestampSecondType>().value(i), 1)
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => (
            column.as_primitive::<TimestampMillisecondType>().value(i),
            1_000,
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => (
            column.as_primitive::<TimestampMicrosecondType>().value(i),
            1_000_000,
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => (
            column.as_primitive::<TimestampNanosecondType>().value(i),
            1_000_000_000,
        ),
        other => return Err(format!("'{ADMITTED}' is of type {other}, not a timestamp")),
    };
    let seconds = value.div_euclid(per_second);
    u32::try_from(seconds)
        .ok()
        .filter(|&s| s > 0)
        .map(|s| Some(Stamp(s)))
        .ok_or_else(|| {
            format!(
                "'{ADMITTED}' is {seconds} s after 1970-01-01T00:00:00Z, outside what a seen store keeps (1970-01-01T00:00:01Z to 2106-02-07T06:28:15Z)"
            )
        })
}

/// Rows waiting to be written.
#[derive(Default)]
struct Rows {
    prints: Vec<[u8; 16]>,
    micros: Vec<i64>,
    sites: Vec<Option<i64>>,
    names: Vec<Option<String>>,
}

impl Rows {
    fn push(&mut self, entry: Entry, names: &SiteNames) {
        self.prints.push(entry.print.to_be_bytes());
        self.micros.push(i64::from(entry.stamp.0) * 1_000_000);
        let site = (entry.site != NO_SITE).then_some(entry.site);
        self.sites.push(site.map(|s| s as i64));
        let name = site.and_then(|s| names.get(&s));
        self.names
            .push(name.map(|n| String::from_utf8_lossy(n).into_owned()));
    }

    fn len(&self) -> usize {
        self.prints.len()
    }

    /// The rows as a record batch of the history's schema; empties them.
    fn take(&mut self) -> RecordBatch {
        let prints = BinaryArray::from_iter_values(self.prints.drain(..));
        let micros =
            TimestampMicrosecondArray::from(std::mem::take(&mut self.micros)).with_timezone("UTC");
        let sites = Int64Array::from(std::mem::take(&mut self.sites));
        let names = StringArray::from(std::mem::take(&mut self.names));
        let columns: Vec<ArrayRef> = vec![
            Arc::new(prints),
            Arc::new(micros),
            Arc::new(sites),
            Arc::new(names),
        ];
        RecordBatch::try_new(schema(), columns)
            .expect("columns of the schema's types and one length")
    }
}

/// A history's schema.
fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new(FINGERPRINT, DataType::Binary, false),
        Field::new(
            ADMITTED,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        Field::new(SITE, DataType::Int64, true),
        Field::new(SITE_NAME, DataType::Utf8, true),
    ]))
}

/// The part files of an export: a new one every [`FILE_ROWS`] rows.
struct FileWriter<'d> {
    dir: &'d Path,
    config: String,
    sites: Option<String>,
    open: Option<(ArrowWriter<File>, PathBuf, u64)>,
    done: Exported,
}

impl<'d> FileWriter<'d> {
    fn new(dir: &'d Path, config: &Config, sites: Option<&str>) -> FileWriter<'d> {
        FileWriter {
            dir,
            config: config.to_json().to_string(),
            sites: sites.map(str::to_string),
            open: None,
            done: Exported::default(),
        }
    }

    fn write(&mut self, rows: &RecordBatch) -> Result<(), StoreError> {
        if rows.num_rows() == 0 {
            return Ok(());
        }
        if self.open.as_ref().is_some_and(|(_, _, n)| *n >= FILE_ROWS) {
            self.close()?;
        }
        if self.open.is_none() {
            self.open_next()?;
        }
        let (writer, path, n) = self.open.as_mut().expect("opened");
        writer.write(rows).map_err(|e| write_error(path, &e))?;
        *n += rows.num_rows() as u64;
        self.done.keys += rows.num_rows() as u64;
        Ok(())
    }

    /// Starts the next part file.
    fn open_next(&mut self) -> Result<(), StoreError> {
        let path = self
            .dir
            .join(format!("part-{:05}.parquet", self.done.files.len()));
        let file = File::create(&path).map_err(StoreError::io(&path, "create"))?;
        let writer = ArrowWriter::try_new(file, schema(), Some(self.properties()))
            .map_err(|e| write_error(&path, &e))?;
        self.open = Some((writer, path, 0));
        Ok(())
    }

    fn properties(&self) -> WriterProperties {
        WriterProperties::builder()
            .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
            .set_compression(Compression::SNAPPY)
            // Fingerprints are random: a dictionary of them only grows.
            .set_column_dictionary_enabled(ColumnPath::from(FINGERPRINT), false)
            .set_key_value_metadata(Some(
                std::iter::once(KeyValue::new(CONFIG_KEY.to_string(), self.config.clone()))
                    .chain(
                        self.sites
                            .iter()
                            .map(|by| KeyValue::new(SITES_KEY.into(), by.clone())),
                    )
                    .collect(),
            ))
            .set_created_by(format!("urinorm {}", env!("CARGO_PKG_VERSION")))
            .build()
    }

    /// Finishes the open file: its footer written, synced.
    fn close(&mut self) -> Result<(), StoreError> {
        let Some((writer, path, _)) = self.open.take() else {
            return Ok(());
        };
        let file = writer.into_inner().map_err(|e| write_error(&path, &e))?;
        file.sync_all().map_err(StoreError::io(&path, "sync"))?;
        self.done.bytes += file
            .metadata()
            .map_err(StoreError::io(&path, "read the size of"))?
            .len();
        self.done.files.push(path);
        Ok(())
    }

    /// Every file closed; a store with no key still has one, empty, so
    /// that readers find the schema.
    fn finish(mut self) -> Result<Exported, StoreError> {
        if self.done.files.is_empty() && self.open.is_none() {
            self.open_next()?;
        }
        self.close()?;
        Ok(self.done)
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    use std::io::Write;
    let mut file = File::create(path).map_err(StoreError::io(path, "create"))?;
    file.write_all(bytes)
        .map_err(StoreError::io(path, "write"))?;
    file.sync_all().map_err(StoreError::io(path, "sync"))
}

/// `read`, a call into the Parquet reader, with a panic of it (a file
/// damaged in a way it does not check) turned into this file's error: a
/// history is untrusted input.
fn contained<T>(
    file: &Path,
    read: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|_| {
        Err(history_error(
            file,
            "cannot be read: the Parquet reader failed on it (a damaged file, or one of a kind it does not read)",
        ))
    })
}

fn history_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::History {
        path: path.to_path_buf(),
        why: why.into(),
    }
}

fn not_parquet(path: &Path, error: &parquet::errors::ParquetError) -> StoreError {
    history_error(
        path,
        format!("is not a Parquet file urinorm can read: {error}"),
    )
}

fn write_error(path: &Path, error: &parquet::errors::ParquetError) -> StoreError {
    history_error(path, format!("cannot be written as Parquet: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Access, Clock};
    use std::time::Duration;

    fn at(secs: u32) -> Clock {
        Clock::at(Stamp(secs))
    }

    fn store(dir: &Path, clock: Clock) -> Store {
        let config = Config::new([("rung", "scheme")]);
        let mut store = Store::open(dir, &config, Access::Write { wait: false }).unwrap();
        store.set_clock(clock);
        store
    }

    #[test]
    fn a_history_keeps_each_key_and_its_time_and_no_forgotten_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(&dir.path().join("s"), at(1_800_000_000));
        s.stage([1u128, 2, 3].into_iter(), Staging::Admit { renewed: 0 })
            .unwrap();
        s.publish().unwrap();
        s.set_clock(at(1_800_000_500));
        s.stage([3u128, 4].into_iter(), Staging::Admit { renewed: 1 })
            .unwrap();
        s.publish().unwrap();
        s.stage([2u128].into_iter(), Staging::Forget).unwrap();
        s.publish().unwrap();
        let history = dir.path().join("h");
        let exported = s.export_history(&history).unwrap();
        assert_eq!((exported.keys, exported.files.len()), (3, 1));
        let mut rows = Vec::new();
        let files = history_files(std::slice::from_ref(&history)).unwrap();
        read_history(&files[0], |row, _| {
            rows.push((row.print, row.stamp.0));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            rows,
            [(1, 1_800_000_000), (3, 1_800_000_500), (4, 1_800_000_500)]
        );
        assert_eq!(
            history_config(&files).unwrap(),
            Some(Config::new([("rung", "scheme")]))
        );
        let exists = s.export_history(&history).unwrap_err().to_string();
        assert!(exists.contains("already exists"), "{exists}");
    }

    #[test]
    fn an_import_admits_what_the_store_lacks_with_its_time_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut from = store(&dir.path().join("from"), at(1_800_000_000));
        from.stage([1u128, 2, 3].into_iter(), Staging::Admit { renewed: 0 })
            .unwrap();
        from.publish().unwrap();
        let history = dir.path().join("h");
        from.export_history(&history).unwrap();
        drop(from);
        let mut into = store(&dir.path().join("into"), at(1_900_000_000));
        into.stage([3u128, 7].into_iter(), Staging::Admit { renewed: 0 })
            .unwrap();
        into.publish().unwrap();
        let files = history_files(&[history]).unwrap();
        let imported = into.import_history(&files).unwrap();
        assert_eq!((imported.rows, imported.admitted, imported.held), (3, 2, 1));
        assert_eq!(into.keys(), 4);
        into.verify().unwrap();
        // An old time is kept: at a maximum age of a year, the imported
        // keys are expired and the store's own are held.
        into.set_clock(at(1_900_000_000).with_max_age(Duration::from_secs(365 * 86400)));
        assert_eq!(
            into.holds(&[1, 2, 3, 7]).unwrap(),
            [
                Holding::Expired,
                Holding::Expired,
                Holding::Held,
                Holding::Held
            ]
        );
        // The same import again admits nothing.
        let again = into.import_history(&files).unwrap();
        assert_eq!((again.admitted, again.held), (0, 3));
        assert_eq!(into.keys(), 4);
        // A store that admitted a key before the history did takes the
        // history's later time: a recrawl elsewhere renews it.
        let mut older = store(&dir.path().join("older"), at(1_700_000_000));
        older
            .stage([2u128].into_iter(), Staging::Admit { renewed: 0 })
            .unwrap();
        older.publish().unwrap();
        let imported = older.import_history(&files).unwrap();
        assert_eq!(
            (imported.admitted, imported.renewed, imported.held),
            (2, 1, 0)
        );
        assert_eq!(older.keys(), 3);
        older.set_clock(at(1_800_000_100).with_max_age(Duration::from_secs(3600)));
        assert_eq!(older.holds(&[2]).unwrap(), [Holding::Held]);
        older.verify().unwrap();
    }

    #[test]
    fn an_empty_store_exports_a_history_with_the_schema_and_no_row() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(&dir.path().join("s"), at(1_800_000_000));
        let history = dir.path().join("h");
        let exported = s.export_history(&history).unwrap();
        assert_eq!((exported.keys, exported.files.len()), (0, 1));
        let mut into = store(&dir.path().join("into"), at(1_800_000_000));
        let files = history_files(&[history]).unwrap();
        assert_eq!(into.import_history(&files).unwrap().rows, 0);
    }

    #[test]
    fn a_row_that_is_not_a_fingerprint_is_refused_naming_file_and_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.parquet");
        let schema = Arc::new(Schema::new(vec![Field::new(
            FINGERPRINT,
            DataType::Binary,
            false,
        )]));
        let prints = BinaryArray::from_iter_values([[7u8; 16].as_slice(), b"short".as_slice()]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(prints)]).unwrap();
        let mut writer = ArrowWriter::try_new(File::create(&path).unwrap(), schema, None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let mut into = store(&dir.path().join("into"), at(1_800_000_000));
        let error = into.import_history(&[path]).unwrap_err().to_string();
        assert!(
            error.contains("bad.parquet': row 2: 'fingerprint' has 5 bytes, not 16"),
            "{error}"
        );
        // Nothing was committed: the error came before the batch's commit.
        assert_eq!(into.keys(), 0);
        // A file the Parquet reader itself panics on (found by fuzzing):
        // this file's error, not a crash.
        let damaged =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/parquet/negative-offsets.parquet");
        let error = into.import_history(&[damaged]).unwrap_err().to_string();
        assert!(
            error.contains("negative-offsets.parquet': cannot be read: the Parquet reader failed"),
            "{error}"
        );
        assert_eq!(into.keys(), 0);
        let text = dir.path().join("text.parquet");
        std::fs::write(&text, "https://example.com/\n").unwrap();
        let error = history_config(&[text]).unwrap_err().to_string();
        assert!(error.contains("is not a Parquet file"), "{error}");
    }
}
