//! External dedup, for more distinct keys than memory holds: the lines the
//! in-memory set could not take are streamed into partition files by bits of
//! their key's hash, each partition is deduplicated in memory on its own
//! (every copy of a key lands in the same one), and the survivors come back
//! in input order by a k-way merge on their sequence numbers, or in byte
//! order of their keys ([`Order::Key`]): each partition's survivors sorted,
//! then merged by key.
//!
//! The same partitions serve a caller that needs every record of one hash
//! together rather than one stream ([`Spill::finish_groups`]): each part is
//! handed over whole, its keys deduplicated, on the pool.
//!
//! It knows records, not URIs: a record is a sequence number (input order), a
//! hash, a key, and the bytes to write when the key is the first of its class.

use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

/// Each partition file's write buffer.
const BUFFER_BYTES: usize = 64 << 10;

/// Each survivor run's read buffer in the merge (there may be thousands).
const MERGE_BUFFER_BYTES: usize = 8 << 10;

/// At most this many partitions at the first level (file handles are
/// limited); a partition still too big is split again.
const MAX_PARTITIONS: usize = 256;
const MIN_PARTITIONS: usize = 16;

/// A record's fixed part: sequence number, hash, tag, key length, output
/// length.
const HEADER_BYTES: usize = 8 + 8 + 4 + 4 + 4;

/// An output length saying "the output is the key".
const SAME_AS_KEY: u32 = u32::MAX;

/// What the summary says about a spill.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpillStats {
    /// The directory the partition files were in (removed since).
    pub dir: PathBuf,
    pub records: u64,
    pub bytes: u64,
    /// Partition files written, splits included.
    pub partitions: u64,
}

/// The order a spill gives its survivors back in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Input order: each class where its first line was.
    Input,
    /// Byte order of the keys (`LC_ALL=C sort`'s).
    Key,
}

/// The first line of a class, as the spill gives it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Survivor<'a> {
    pub key: &'a [u8],
    /// What to write for it.
    pub output: &'a [u8],
    /// Lines in its class.
    pub size: u64,
    /// The tag its first line was pushed with.
    pub tag: u32,
}

/// The partition files being written.
pub struct Spill {
    dir: tempfile::TempDir,
    partitions: Vec<BufWriter<File>>,
    /// How many top bits of the hash choose a partition.
    bits: u32,
    /// The memory a partition takes in the finish, per byte of its file.
    memory_per_byte: u64,
    next_sequence: u64,
    /// Runs of survivors given whole ([`Spill::add_run`]), to merge too.
    added_runs: Vec<PathBuf>,
    stats: SpillStats,
    _registered: crate::sys::cleanup::Registered,
    /// The directory's lock, which tells a sweep it is in use.
    _held: File,
}

/// A spill that could not be written or read back.
#[derive(Debug)]
pub struct SpillError {
    pub dir: PathBuf,
    /// Bytes written to it before the error.
    pub written: u64,
    /// About how many bytes the whole spill needs, when that can be told.
    pub needed: Option<u64>,
    pub error: io::Error,
}

impl SpillError {
    /// Nothing could be made in `dir` (a spill's directory, a spool).
    pub(crate) fn creating(dir: &Path, error: io::Error) -> SpillError {
        SpillError {
            dir: dir.to_path_buf(),
            written: 0,
            needed: None,
            error,
        }
    }
}

impl std::fmt::Display for SpillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = |n: u64| n as f64 / (1 << 20) as f64;
        write!(
            f,
            "cannot spill to '{}': {} ({:.1} MiB written",
            crate::escape::escape_str(&self.dir.display().to_string()),
            crate::sys::os_error::Reason(&self.error),
            mib(self.written)
        )?;
        if let Some(needed) = self.needed {
            write!(f, ", about {:.1} MiB needed in all", mib(needed))?;
        }
        // What to do about it is the caller's to say, in its own terms
        // (the command line names its flags).
        f.write_str(")")
    }
}

impl std::error::Error for SpillError {}

impl Spill {
    /// A new spill in a fresh directory under `temp_dir`, with about
    /// `expected_bytes * memory_per_byte / memory_limit` partitions, so that
    /// each one fits the limit when finished, a partition taking
    /// `memory_per_byte` bytes of memory a byte of its file
    /// ([`DEDUP_MEMORY_PER_BYTE`] in [`Spill::finish`]).
    pub fn create(
        temp_dir: &Path,
        expected_bytes: u64,
        memory_limit: u64,
        memory_per_byte: u64,
    ) -> io::Result<Spill> {
        let (dir, registered) = crate::sys::cleanup::create(
            || {
                tempfile::Builder::new()
                    .prefix(&crate::sys::cleanup::Temporary::Spill.prefix())
                    .tempdir_in(temp_dir)
            },
            |dir| dir.path(),
        )?;
        let held = crate::sys::cleanup::hold(dir.path())?;
        let wanted =
            (expected_bytes / memory_limit.max(1)).saturating_mul(memory_per_byte) as usize;
        let count = wanted
            .next_power_of_two()
            .clamp(MIN_PARTITIONS, MAX_PARTITIONS);
        let partitions = (0..count)
            .map(|p| {
                let file = File::create(dir.path().join(format!("p{p}")))?;
                Ok(BufWriter::with_capacity(BUFFER_BYTES, file))
            })
            .collect::<io::Result<_>>()?;
        Ok(Spill {
            stats: SpillStats {
                dir: dir.path().to_path_buf(),
                partitions: count as u64,
                ..SpillStats::default()
            },
            dir,
            partitions,
            bits: count.trailing_zeros(),
            memory_per_byte,
            next_sequence: 0,
            added_runs: Vec::new(),
            _registered: registered,
            _held: held,
        })
    }

    /// Adds one line, in input order: its key's hash, its key, what to
    /// write if it is the first of its class (`None`: the key), and a
    /// number of the caller's that its class's [`Survivor`] carries back.
    pub fn push(
        &mut self,
        hash: u64,
        key: &[u8],
        output: Option<&[u8]>,
        tag: u32,
    ) -> Result<(), SpillError> {
        let partition = partition_of(hash, 0, self.bits);
        let record = Record {
            sequence: self.next_sequence,
            hash,
            tag,
            key,
            output,
        };
        self.next_sequence += 1;
        let written = write_record(&mut self.partitions[partition], &record)
            .map_err(|error| self.error(error))?;
        self.stats.records += 1;
        self.stats.bytes += written as u64;
        Ok(())
    }

    fn error(&self, error: io::Error) -> SpillError {
        SpillError {
            dir: self.stats.dir.clone(),
            written: self.stats.bytes,
            needed: None,
            error,
        }
    }

    /// Adds classes that are no line's (a set's classes, already
    /// deduplicated against every pushed line), in byte order of their
    /// keys: they join the survivors of an [`Order::Key`] finish.
    pub fn add_run<'s>(
        &mut self,
        survivors: impl Iterator<Item = Survivor<'s>>,
    ) -> Result<(), SpillError> {
        let path = self
            .dir
            .path()
            .join(format!("added{}.run", self.added_runs.len()));
        let written = (|| {
            let mut out = BufWriter::with_capacity(BUFFER_BYTES, File::create(&path)?);
            for s in survivors {
                let output = (s.output != s.key).then_some(s.output);
                write_record(&mut out, &Record::survivor(s.key, output, s.size, s.tag))?;
            }
            out.flush()
        })();
        written.map_err(|e| self.error(e))?;
        self.added_runs.push(path);
        Ok(())
    }

    /// Deduplicates the partitions on `pool`, as many at a time as it has
    /// threads, within `memory_limit` together, then calls `emit` with the
    /// first line of every class, in `order`. Removes the files.
    pub fn finish(
        mut self,
        pool: &rayon::ThreadPool,
        memory_limit: u64,
        order: Order,
        mut emit: impl FnMut(Survivor<'_>) -> io::Result<()>,
    ) -> Result<SpillStats, SpillError> {
        let done = self.each_part(pool, memory_limit, |path, mut survivors| {
            if order == Order::Key {
                // Keys are distinct here: any sort is the sort.
                survivors.sort_unstable_by(|(a, _), (b, _)| a.key.cmp(b.key));
            }
            let run = suffixed(path, ".run");
            let mut out = BufWriter::with_capacity(BUFFER_BYTES, File::create(&run)?);
            for (record, size) in survivors {
                // A survivor record carries its class's size where the hash was.
                write_record(
                    &mut out,
                    &Record {
                        hash: size,
                        ..record
                    },
                )?;
            }
            out.flush()?;
            Ok(run)
        });
        let mut runs = std::mem::take(&mut self.added_runs);
        runs.extend(done?);
        merge(&runs, order, &mut emit).map_err(|e| self.error(e))?;
        Ok(self.stats)
    }

    /// Hands each part of the spill to `each` on `pool`, as many at a time
    /// as it has threads, within `memory_limit` together (a part taking the
    /// spill's memory per byte of its file): the first record of every key
    /// in the part, in the order pushed, with its class's size. Every record
    /// of one hash is in one part, so a caller groups by the hash it pushes
    /// with (a part larger than its share is split by further bits of the
    /// hash while that still separates records). Returns what `each` made
    /// of every part, in no particular order. Removes the files.
    pub fn finish_groups<T: Send>(
        mut self,
        pool: &rayon::ThreadPool,
        memory_limit: u64,
        each: impl Fn(&[Survivor<'_>]) -> T + Sync,
    ) -> Result<(Vec<T>, SpillStats), SpillError> {
        let made = self.each_part(pool, memory_limit, |_, survivors| {
            let survivors: Vec<Survivor<'_>> = survivors
                .into_iter()
                .map(|(record, size)| Survivor {
                    key: record.key,
                    output: record.output.unwrap_or(record.key),
                    size,
                    tag: record.tag,
                })
                .collect();
            Ok(each(&survivors))
        })?;
        Ok((made, self.stats))
    }

    /// Flushes the partitions, then calls `visit` on `pool` with each part
    /// and its survivors (see [`Spill::finish_groups`]), counting the splits.
    fn each_part<T: Send>(
        &mut self,
        pool: &rayon::ThreadPool,
        memory_limit: u64,
        visit: impl Fn(&Path, Vec<(Record<&[u8]>, u64)>) -> io::Result<T> + Sync,
    ) -> Result<Vec<T>, SpillError> {
        let flushed: io::Result<()> = self.partitions.iter_mut().try_for_each(Write::flush);
        flushed.map_err(|e| self.error(e))?;
        let paths: Vec<PathBuf> = (0..self.partitions.len())
            .map(|p| self.dir.path().join(format!("p{p}")))
            .collect();
        self.partitions.clear();
        let per_partition = (memory_limit / pool.current_num_threads().max(1) as u64).max(1);
        let part_limit = Room {
            bytes: per_partition,
            per_byte: self.memory_per_byte,
        };
        let bits = self.bits;
        let done: Vec<io::Result<(Vec<T>, u64)>> = pool.install(|| {
            paths
                .par_iter()
                .map(|path| visit_parts(path, bits, part_limit, true, &visit))
                .collect()
        });
        let mut made = Vec::new();
        for result in done {
            let (visited, splits) = result.map_err(|e| self.error(e))?;
            made.extend(visited);
            self.stats.partitions += splits;
        }
        Ok(made)
    }
}

/// The memory a dedup partition takes, per byte of its file: its bytes,
/// and the table over them.
pub const DEDUP_MEMORY_PER_BYTE: u64 = 2;

/// The memory a part may take, and what it takes per byte of its file.
#[derive(Clone, Copy)]
struct Room {
    bytes: u64,
    per_byte: u64,
}

/// The partition of `hash` among `2^bits` (never fewer than 16), from the
/// bits below the top `used`.
fn partition_of(hash: u64, used: u32, bits: u32) -> usize {
    ((hash << used) >> (64 - bits)) as usize
}

/// Writes one record; returns its size.
fn write_record<K: AsRef<[u8]>>(out: &mut impl Write, record: &Record<K>) -> io::Result<usize> {
    let (key, output) = (
        record.key.as_ref(),
        record.output.as_ref().map(AsRef::as_ref),
    );
    let key_len = u32::try_from(key.len()).map_err(io::Error::other)?;
    let output_len = match output {
        Some(o) => u32::try_from(o.len())
            .ok()
            .filter(|&n| n != SAME_AS_KEY)
            .ok_or_else(|| io::Error::other("an output line of 4 GiB"))?,
        None => SAME_AS_KEY,
    };
    out.write_all(&record.sequence.to_le_bytes())?;
    out.write_all(&record.hash.to_le_bytes())?;
    out.write_all(&record.tag.to_le_bytes())?;
    out.write_all(&key_len.to_le_bytes())?;
    out.write_all(&output_len.to_le_bytes())?;
    out.write_all(key)?;
    let output = output.unwrap_or_default();
    out.write_all(output)?;
    Ok(HEADER_BYTES + key.len() + output.len())
}

/// A record's fixed part: sequence number, hash, tag, key length, and
/// output length unless the output is the key.
struct Header {
    sequence: u64,
    hash: u64,
    tag: u32,
    key_len: usize,
    output_len: Option<usize>,
}

impl Header {
    fn read(bytes: &[u8; HEADER_BYTES]) -> Header {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        Header {
            sequence: u64_at(0),
            hash: u64_at(8),
            tag: u32_at(16),
            key_len: u32_at(20) as usize,
            output_len: Some(u32_at(24))
                .filter(|&n| n != SAME_AS_KEY)
                .map(|n| n as usize),
        }
    }
}

/// The records of a partition file read whole.
fn records(bytes: &[u8]) -> impl Iterator<Item = io::Result<Record<&[u8]>>> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let truncated =
            || io::Error::new(io::ErrorKind::UnexpectedEof, "a spill file is cut short");
        if rest.len() < HEADER_BYTES {
            return Some(Err(truncated()));
        }
        let header = Header::read(rest[..HEADER_BYTES].try_into().unwrap());
        let key_end = HEADER_BYTES + header.key_len;
        let end = key_end + header.output_len.unwrap_or(0);
        if rest.len() < end {
            return Some(Err(truncated()));
        }
        let record = Record {
            sequence: header.sequence,
            hash: header.hash,
            tag: header.tag,
            key: &rest[HEADER_BYTES..key_end],
            output: header.output_len.map(|_| &rest[key_end..end]),
        };
        rest = &rest[end..];
        Some(Ok(record))
    })
}

/// Calls `visit` with each part of the partition file at `path` (the
/// whole file if it fits `room`, else the parts of a split by the hash's
/// next bits), and the first record of each key in the part, in file
/// order, with the number of records of its key. Returns what `visit`
/// made and how many split files were made. Removes the partition file.
fn visit_parts<T>(
    path: &Path,
    used: u32,
    room: Room,
    splittable: bool,
    visit: &impl Fn(&Path, Vec<(Record<&[u8]>, u64)>) -> io::Result<T>,
) -> io::Result<(Vec<T>, u64)> {
    let size = std::fs::metadata(path)?.len();
    if size == 0 {
        std::fs::remove_file(path)?;
        return Ok((Vec::new(), 0));
    }
    // Past 64 bits used the keys cannot be told apart by hash: keep them
    // together.
    if splittable && size.saturating_mul(room.per_byte) > room.bytes && used < 64 - SPLIT_BITS {
        return split(path, size, used, room, visit);
    }
    let bytes = std::fs::read(path)?;
    let mut classes: HashMap<&[u8], usize, ahash::RandomState> = HashMap::default();
    let mut survivors: Vec<(Record<&[u8]>, u64)> = Vec::new();
    for record in records(&bytes) {
        let record = record?;
        match classes.entry(record.key) {
            Entry::Occupied(class) => survivors[*class.get()].1 += 1,
            Entry::Vacant(slot) => {
                slot.insert(survivors.len());
                survivors.push((record, 1));
            }
        }
    }
    drop(classes);
    let made = visit(path, survivors)?;
    std::fs::remove_file(path)?;
    Ok((vec![made], 0))
}

/// How many more hash bits a split uses.
const SPLIT_BITS: u32 = 4;

/// Splits a partition of `size` bytes by the next hash bits, then visits
/// each part. A part that got every record (all of one hash, as far as the
/// bits go) is visited whole: splitting it again would only copy it.
fn split<T>(
    path: &Path,
    size: u64,
    used: u32,
    room: Room,
    visit: &impl Fn(&Path, Vec<(Record<&[u8]>, u64)>) -> io::Result<T>,
) -> io::Result<(Vec<T>, u64)> {
    let parts: Vec<PathBuf> = (0..1 << SPLIT_BITS)
        .map(|p| suffixed(path, &format!(".{p}")))
        .collect();
    let mut sizes = vec![0u64; parts.len()];
    {
        let mut writers = parts
            .iter()
            .map(|p| Ok(BufWriter::with_capacity(BUFFER_BYTES, File::create(p)?)))
            .collect::<io::Result<Vec<_>>>()?;
        let mut reader = BufReader::with_capacity(BUFFER_BYTES, File::open(path)?);
        while let Some(record) = read_record(&mut reader)? {
            let part = partition_of(record.hash, used, SPLIT_BITS);
            sizes[part] += write_record(&mut writers[part], &record)? as u64;
        }
        for w in &mut writers {
            w.flush()?;
        }
    }
    std::fs::remove_file(path)?;
    let mut made = Vec::new();
    let mut files = parts.len() as u64;
    for (part, &part_size) in parts.iter().zip(&sizes) {
        let separated = part_size < size;
        let (part_made, part_files) = visit_parts(part, used + SPLIT_BITS, room, separated, visit)?;
        made.extend(part_made);
        files += part_files;
    }
    Ok((made, files))
}

/// `path` with `suffix` added to its name (`p3` → `p3.7`, `p3.7.run`), so
/// that the files of a split never share a name.
fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// One record: its line's sequence number, its key's hash (a survivor's:
/// its class's size), the caller's tag, its key and output; the bytes
/// borrowed (`&[u8]`) or owned (`Vec<u8>`, read from a stream).
struct Record<K> {
    sequence: u64,
    hash: u64,
    tag: u32,
    key: K,
    output: Option<K>,
}

impl<'s> Record<&'s [u8]> {
    /// A survivor's record: its class's size where the hash was (and no
    /// sequence: it is given in the order it is merged in).
    fn survivor(key: &'s [u8], output: Option<&'s [u8]>, size: u64, tag: u32) -> Self {
        Record {
            sequence: 0,
            hash: size,
            tag,
            key,
            output,
        }
    }
}

fn read_record(reader: &mut impl Read) -> io::Result<Option<Record<Vec<u8>>>> {
    let mut header = [0u8; HEADER_BYTES];
    match reader.read_exact(&mut header[..1]) {
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        other => other?,
    }
    reader.read_exact(&mut header[1..])?;
    let header = Header::read(&header);
    let mut key = vec![0; header.key_len];
    reader.read_exact(&mut key)?;
    let output = match header.output_len {
        None => None,
        Some(n) => {
            let mut output = vec![0; n];
            reader.read_exact(&mut output)?;
            Some(output)
        }
    };
    Ok(Some(Record {
        sequence: header.sequence,
        hash: header.hash,
        tag: header.tag,
        key,
        output,
    }))
}

/// Merges survivor runs (each in `order`), calling `emit` with each in
/// that order; removes them.
fn merge(
    runs: &[PathBuf],
    order: Order,
    emit: &mut impl FnMut(Survivor<'_>) -> io::Result<()>,
) -> io::Result<()> {
    let mut readers = runs
        .iter()
        .map(|p| Ok(BufReader::with_capacity(MERGE_BUFFER_BYTES, File::open(p)?)))
        .collect::<io::Result<Vec<_>>>()?;
    // A min-heap holding each run's next record, keyed by its place in the
    // order: its sequence number, or its key (moved into the heap while
    // the record waits, and back out for its turn).
    let mut heads = BinaryHeap::new();
    let mut current: Vec<Option<Record<Vec<u8>>>> = Vec::with_capacity(readers.len());
    let push = |heads: &mut BinaryHeap<_>, record: &mut Record<Vec<u8>>, r: usize| {
        let place = match order {
            Order::Input => (record.sequence, Vec::new()),
            Order::Key => (0, std::mem::take(&mut record.key)),
        };
        heads.push(std::cmp::Reverse((place, r)));
    };
    for (r, reader) in readers.iter_mut().enumerate() {
        let mut record = read_record(reader)?;
        if let Some(record) = &mut record {
            push(&mut heads, record, r);
        }
        current.push(record);
    }
    while let Some(std::cmp::Reverse(((_, key), r))) = heads.pop() {
        let mut record = current[r].take().expect("a run's head is loaded");
        if order == Order::Key {
            record.key = key;
        }
        emit(Survivor {
            output: record.output.as_deref().unwrap_or(&record.key),
            key: &record.key,
            size: record.hash,
            tag: record.tag,
        })?;
        if let Some(mut record) = read_record(&mut readers[r])? {
            push(&mut heads, &mut record, r);
            current[r] = Some(record);
        }
    }
    drop(readers);
    for run in runs {
        std::fs::remove_file(run)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spill_gives_its_classes_back_in_input_order() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut spill = Spill::create(dir.path(), 0, 64 << 20, DEDUP_MEMORY_PER_BYTE)?;
        for (hash, key) in [(7, "b"), (9, "a"), (7, "b")] {
            spill
                .push(hash, key.as_bytes(), None, 0)
                .map_err(io::Error::other)?;
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut classes = Vec::new();
        let stats = spill
            .finish(&pool, 64 << 20, Order::Input, |s| {
                classes.push((s.output.to_vec(), s.size));
                Ok(())
            })
            .map_err(io::Error::other)?;
        assert_eq!(classes, [(b"b".to_vec(), 2), (b"a".to_vec(), 1)]);
        assert_eq!(stats.records, 3);
        Ok(())
    }

    /// A class as the tests see it: key, output, size.
    type Class = (Vec<u8>, Vec<u8>, u64);

    /// The naive oracle: each key's first output and class size, in input order.
    fn first_occurrences(lines: &[(Vec<u8>, Vec<u8>)]) -> Vec<Class> {
        let mut out: Vec<Class> = Vec::new();
        let mut index: HashMap<&[u8], usize> = HashMap::new();
        for (key, output) in lines {
            match index.get(&key[..]) {
                Some(&i) => out[i].2 += 1,
                None => {
                    index.insert(key, out.len());
                    out.push((key.clone(), output.clone(), 1));
                }
            }
        }
        out
    }

    /// Keys with few distinct hashes (so partitions are uneven and splits
    /// meet equal hashes), outputs that are the key or not.
    fn lines(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..n)
            .map(|i| {
                let k = i * 7919 % 3001;
                let key = format!("http://example.com/{k}").into_bytes();
                let output = match k % 3 {
                    0 => key.clone(),
                    _ => format!("out {k} {i}").into_bytes(),
                };
                (key, output)
            })
            .collect()
    }

    /// Spills `lines`, adds `added` as a run, and gives back what the
    /// spill returns in `order`.
    fn spill_all(
        lines: &[(Vec<u8>, Vec<u8>)],
        added: &[Class],
        limit: u64,
        order: Order,
        hash: impl Fn(&[u8]) -> u64,
    ) -> (Vec<Class>, SpillStats) {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::create(dir.path(), 0, limit, DEDUP_MEMORY_PER_BYTE).unwrap();
        for (key, output) in lines {
            let output = (output != key).then_some(&output[..]);
            spill
                .push(hash(key), key, output, key.len() as u32)
                .unwrap();
        }
        let added_survivors = added.iter().map(|(key, output, size)| Survivor {
            key,
            output,
            size: *size,
            tag: key.len() as u32,
        });
        spill.add_run(added_survivors).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut got = Vec::new();
        let stats = spill
            .finish(&pool, limit, order, |s| {
                assert_eq!(s.tag, s.key.len() as u32, "the tag comes back");
                got.push((s.key.to_vec(), s.output.to_vec(), s.size));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "files left behind"
        );
        (got, stats)
    }

    #[test]
    fn agrees_with_first_occurrences_in_memory_and_when_split() {
        let lines = lines(5_000);
        let expected = first_occurrences(&lines);
        let hasher = ahash::RandomState::with_seeds(1, 2, 3, 4);
        for limit in [1 << 30, 32 << 10] {
            let (got, stats) = spill_all(&lines, &[], limit, Order::Input, |k| hasher.hash_one(k));
            assert_eq!(got, expected, "limit {limit}");
            assert_eq!(stats.records, 5_000);
            if limit < 1 << 20 {
                assert!(
                    stats.partitions > MIN_PARTITIONS as u64,
                    "limit {limit}: no split"
                );
            }
        }
        // All keys on a handful of hashes: splitting cannot separate them,
        // and must stop rather than recurse forever.
        let (got, _) = spill_all(&lines, &[], 32 << 10, Order::Input, |k| {
            hasher.hash_one(k) % 3
        });
        assert_eq!(got, expected);
    }

    /// A part as the tests see it: each record's hash, key and class size.
    type Part = Vec<(u64, Vec<u8>, u64)>;

    /// Spills `lines` with `group(key)` as each one's hash, and gives back
    /// each part `finish_groups` hands over.
    fn groups_of(
        lines: &[(Vec<u8>, Vec<u8>)],
        limit: u64,
        group: impl Fn(&[u8]) -> u64,
    ) -> (Vec<Part>, SpillStats) {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = Spill::create(dir.path(), 0, limit, 4).unwrap();
        for (key, _) in lines {
            // The tag carries the hash back, to check the grouping.
            let hash = group(key);
            spill.push(hash, key, None, hash as u32).unwrap();
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let (parts, stats) = spill
            .finish_groups(&pool, limit, |records| {
                records
                    .iter()
                    .map(|r| (u64::from(r.tag), r.key.to_vec(), r.size))
                    .collect::<Vec<_>>()
            })
            .unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        (parts, stats)
    }

    #[test]
    fn groups_come_whole_deduplicated_and_in_the_order_pushed() {
        let lines = lines(5_000);
        let expected = first_occurrences(&lines);
        // 40 groups of very unequal sizes, spread over the hash's top bits.
        let group = |key: &[u8]| {
            let n: u64 = std::str::from_utf8(&key[19..]).unwrap().parse().unwrap();
            ((n * n) % 40).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32
        };
        for limit in [1 << 30, 16 << 10] {
            let (parts, stats) = groups_of(&lines, limit, group);
            let mut seen_groups = HashMap::new();
            let mut got = Vec::new();
            for (p, part) in parts.iter().enumerate() {
                for (hash, key, size) in part {
                    assert_eq!(*hash, group(key), "the tag comes back");
                    let first = *seen_groups.entry(*hash).or_insert(p);
                    assert_eq!(first, p, "limit {limit}: group {hash} in two parts");
                    got.push((key.clone(), *size));
                }
                // Within a part, the order pushed.
                let order: Vec<usize> = part
                    .iter()
                    .map(|(_, key, _)| expected.iter().position(|(k, ..)| k == key).unwrap())
                    .collect();
                assert!(order.is_sorted(), "limit {limit}");
            }
            got.sort();
            let mut want: Vec<(Vec<u8>, u64)> =
                expected.iter().map(|(k, _, n)| (k.clone(), *n)).collect();
            want.sort();
            assert_eq!(got, want, "limit {limit}");
            if limit < 1 << 20 {
                assert!(stats.partitions > MIN_PARTITIONS as u64, "no split");
            }
        }
        // One group past the limit cannot be split: it comes whole, split
        // once (to see that it is one) and not again.
        let (parts, stats) = groups_of(&lines, 16 << 10, |_| 7);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].len(), expected.len());
        assert_eq!(stats.partitions, MIN_PARTITIONS as u64 + (1 << SPLIT_BITS));
    }

    #[test]
    fn in_key_order_merges_every_partition_and_the_added_run() {
        let lines = lines(5_000);
        // Classes of a set, deduplicated against the lines: other keys.
        let mut added: Vec<Class> = (0..700)
            .map(|i| {
                let key = format!("http://example.com/{}x", i * 3).into_bytes();
                let output = if i % 2 == 0 {
                    key.clone()
                } else {
                    b"set".to_vec()
                };
                (key, output, i + 1)
            })
            .collect();
        added.sort();
        let mut expected = first_occurrences(&lines);
        expected.extend(added.iter().cloned());
        expected.sort();
        let hasher = ahash::RandomState::with_seeds(1, 2, 3, 4);
        for limit in [1 << 30, 32 << 10] {
            let (got, _) = spill_all(&lines, &added, limit, Order::Key, |k| hasher.hash_one(k));
            assert_eq!(got, expected, "limit {limit}");
        }
    }

    #[test]
    fn errors_name_the_directory_and_the_space_needed() {
        let error = SpillError {
            dir: PathBuf::from("/mnt/small"),
            written: 3 << 20,
            needed: Some(40 << 20),
            error: io::Error::new(io::ErrorKind::StorageFull, "No space left on device"),
        };
        assert_eq!(
            error.to_string(),
            "cannot spill to '/mnt/small': No space left on device (3.0 MiB written, about 40.0 MiB needed in all)"
        );
        let hostile = SpillError::creating(Path::new("/tmp/a\x1b[2Jb"), io::Error::other("no"));
        assert!(
            hostile
                .to_string()
                .starts_with("cannot spill to '/tmp/a\\x1b[2Jb'"),
            "{hostile}"
        );
    }
}
