//! A run: one immutable file of fingerprints in ascending order, each
//! with the time it was admitted, read a block at a time through a small
//! fence index, never whole.
//!
//! ```text
//! header   64 bytes  magic "urinorm-seen-run", version, prints per block,
//!                    count, the store's configuration id, CRC-32 of the above
//! blocks   one per BLOCK_PRINTS prints (the last may be shorter): the
//!                    block's prints, 16 bytes each, strictly ascending
//!                    (big-endian: byte order is numeric order), then their
//!                    stamps, 4 bytes each, then the CRC-32 of both
//! filter   one per block: its prints' filter (`filter`), 10 KiB of
//!                    32-bit words, the last block's too however short
//! fence    one entry per block: its first print (16) and the CRC-32 of
//!                    its bytes, prints and stamps (4)
//! trailer  CRC-32 of the filter (4), CRC-32 of the fence (4), "done"
//! ```
//!
//! A stamp is the [`Stamp`] of the commit that admitted the key (seconds
//! since the Unix epoch), or 0 for a key forgotten: a tombstone, which
//! hides the key in older runs. Integers are little-endian; checksums are
//! CRC-32 (IEEE). The file's length follows from the count, so a file cut
//! short is caught before any block is read; every block read is checked
//! against its checksum, so a damaged block is an error, never a wrong
//! answer. A block's checksum is in the fence and after the block itself:
//! the header is written last at the file's start, so a run cut short (a
//! full disk, a partial copy) that lost its fence still has a header and
//! blocks that each prove themselves, which salvage keeps
//! ([`Run::open_damaged`]).
//!
//! The filter is read only by a store asked to keep it in memory
//! ([`Run::load_filter`]: a live run, which looks keys up a few at a time);
//! a bulk join reads the blocks its batch falls in, as it always did.
//!
//! Older versions are read as well. Version 3 has no checksum after each
//! block (a run of it cut short is lost whole). Version 2 has no filter (and no
//! filter checksum in its trailer): its lookups read their blocks. Version
//! 1 (before keys had times) has prints only, each stamped with the file's
//! modification time, which is no earlier than the commit that admitted it
//! (a key so never expires early).
//!
//! It knows fingerprints, stamps and bytes on disk; not keys, manifests or
//! locks.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::filter::{self, FILTER_WORDS};
use super::{Clock, Probe, Stamp, StoreError};

const MAGIC: &[u8; 16] = b"urinorm-seen-run";
/// The version written; versions 1 (no stamps), 2 (no filter) and 3 (no
/// checksum after each block) are read too.
const VERSION: u32 = 4;
const HEADER_BYTES: u64 = 64;
const PRINT_BYTES: u64 = 16;
const STAMP_BYTES: u64 = 4;
const FENCE_ENTRY_BYTES: u64 = 20;
const BLOCK_CRC_BYTES: u64 = 4;
const FILTER_BYTES: u64 = FILTER_WORDS as u64 * 4;
const TRAILER: &[u8; 4] = b"done";

/// Prints per block: 64 KiB read per block, and a fence of 20 bytes per
/// 64 KiB of run (about 50 MB of fence for 10^10 keys).
pub(crate) const BLOCK_PRINTS: usize = 4096;

/// The CRC-32 of `bytes`.
fn crc(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// A block's first print and checksum.
#[derive(Clone, Copy, Debug)]
struct FenceEntry {
    first: u128,
    crc: u32,
}

/// An open run: its file, its count and its fence, checked.
#[derive(Debug)]
pub(crate) struct Run {
    path: PathBuf,
    file: File,
    layout: Layout,
    fence: Vec<FenceEntry>,
    /// A version 1 run's stamp for all its keys.
    stamp_v1: Stamp,
    /// The filter's checksum, from version 3.
    filter_crc: Option<u32>,
    /// Every block's filter, one after another, once loaded.
    filter: Option<Vec<u32>>,
}

/// One block read from a run, reused from block to block.
#[derive(Default)]
pub(crate) struct Block {
    bytes: Vec<u8>,
    prints: Vec<u128>,
    stamps: Vec<Stamp>,
}

/// Where a run's parts are, from its version and count.
#[derive(Clone, Copy, Debug)]
struct Layout {
    version: u32,
    count: u64,
}

impl Layout {
    fn blocks(&self) -> u64 {
        self.count.div_ceil(BLOCK_PRINTS as u64)
    }

    /// The bytes of one entry: a print, and from version 2 its stamp.
    fn entry_bytes(&self) -> u64 {
        match self.version {
            1 => PRINT_BYTES,
            _ => PRINT_BYTES + STAMP_BYTES,
        }
    }

    fn has_filter(&self) -> bool {
        self.version >= 3
    }

    /// The bytes after each block: its checksum, from version 4.
    fn block_trailer_bytes(&self) -> u64 {
        match self.version >= 4 {
            true => BLOCK_CRC_BYTES,
            false => 0,
        }
    }

    /// Where block `b` starts.
    fn block_at(&self, b: u64) -> u64 {
        let block = BLOCK_PRINTS as u64 * self.entry_bytes() + self.block_trailer_bytes();
        HEADER_BYTES + b * block
    }

    fn filter_at(&self) -> u64 {
        HEADER_BYTES + self.count * self.entry_bytes() + self.blocks() * self.block_trailer_bytes()
    }

    fn filter_bytes(&self) -> u64 {
        match self.has_filter() {
            true => self.blocks() * FILTER_BYTES,
            false => 0,
        }
    }

    fn fence_at(&self) -> u64 {
        self.filter_at() + self.filter_bytes()
    }

    /// The checksums (the filter's from version 3, the fence's) and "done".
    fn trailer_bytes(&self) -> u64 {
        match self.has_filter() {
            true => 12,
            false => 8,
        }
    }

    /// The file's size, or `None` if a count read from a damaged header
    /// overflows it.
    fn file_len(&self) -> Option<u64> {
        let blocks = self.blocks();
        let filter = match self.has_filter() {
            true => blocks.checked_mul(FILTER_BYTES)?,
            false => 0,
        };
        self.count
            .checked_mul(self.entry_bytes())?
            .checked_add(blocks.checked_mul(FENCE_ENTRY_BYTES + self.block_trailer_bytes())?)?
            .checked_add(filter)?
            .checked_add(HEADER_BYTES + self.trailer_bytes())
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn print_at(bytes: &[u8], at: usize) -> u128 {
    u128::from_be_bytes(bytes[at..at + 16].try_into().expect("16 bytes"))
}

impl Run {
    /// Opens the run at `path`, made for the configuration `config_id`, and
    /// checks its header, length and fence.
    pub(crate) fn open(path: &Path, config_id: &[u8; 16]) -> Result<Run, StoreError> {
        let (file, layout, len) = open_header(path, config_id)?;
        let damaged = |why: &str| found_damaged(path, why);
        let count = layout.count;
        match layout.file_len() {
            Some(expected) if expected == len => {}
            Some(expected) if expected > len => {
                return Err(damaged(&format!(
                    "is cut short: {len} bytes of the {expected} its {count} fingerprints take"
                )));
            }
            _ => {
                return Err(damaged(&format!(
                    "is {len} bytes long, not what its {count} fingerprints take"
                )));
            }
        }
        let fence_len = layout.blocks() as usize * FENCE_ENTRY_BYTES as usize;
        let mut fence_bytes = vec![0u8; fence_len + layout.trailer_bytes() as usize];
        read_at(&file, path, &mut fence_bytes, layout.fence_at())?;
        let (fence_bytes, trailer) = fence_bytes.split_at(fence_len);
        let (filter_crc, trailer) = trailer.split_at(trailer.len() - 8);
        if &trailer[4..] != TRAILER || crc(fence_bytes) != u32_at(trailer, 0) {
            return Err(damaged("has a fence index whose checksum does not match"));
        }
        let fence = fence_bytes
            .chunks_exact(FENCE_ENTRY_BYTES as usize)
            .map(|entry| FenceEntry {
                first: print_at(entry, 0),
                crc: u32_at(entry, 16),
            })
            .collect();
        let filter_crc = layout.has_filter().then(|| u32_at(filter_crc, 0));
        Run::with_fence(path, file, layout, fence, filter_crc)
    }

    /// Opens a run that [`Run::open`] finds damaged, for salvage: from
    /// version 4, its fence is rebuilt from the checksums after its blocks,
    /// as far as whole blocks are left in the file (a run cut short keeps
    /// its leading blocks; a damaged fence or filter loses nothing). Returns
    /// the run (with no filter) and the entries of the blocks the file no
    /// longer holds, and what [`Run::open`] found wrong, if anything; a run
    /// of an older version, or with no sound header, is an error (lost
    /// whole).
    pub(crate) fn open_damaged(
        path: &Path,
        config_id: &[u8; 16],
    ) -> Result<(Run, u64, Option<StoreError>), StoreError> {
        let damage = match Run::open(path, config_id) {
            Ok(run) => return Ok((run, 0, None)),
            Err(e @ StoreError::Damaged { .. }) => e,
            Err(e) => return Err(e),
        };
        let (file, layout, len) = open_header(path, config_id)?;
        if layout.block_trailer_bytes() == 0 {
            return Err(damage);
        }
        let entry_bytes = layout.entry_bytes();
        let mut fence = Vec::new();
        let mut kept = 0;
        for b in 0..layout.blocks() {
            let n = (layout.count - b * BLOCK_PRINTS as u64).min(BLOCK_PRINTS as u64);
            let (at, checksum_at) = (layout.block_at(b), layout.block_at(b) + n * entry_bytes);
            if checksum_at + BLOCK_CRC_BYTES > len.min(layout.filter_at()) {
                break;
            }
            let (mut first, mut checksum) = ([0u8; 16], [0u8; 4]);
            read_at(&file, path, &mut first, at)?;
            read_at(&file, path, &mut checksum, checksum_at)?;
            fence.push(FenceEntry {
                first: u128::from_be_bytes(first),
                crc: u32::from_le_bytes(checksum),
            });
            kept += n;
        }
        let run = Run::with_fence(path, file, layout, fence, None)?;
        Ok((run, layout.count - kept, Some(damage)))
    }

    fn with_fence(
        path: &Path,
        file: File,
        layout: Layout,
        fence: Vec<FenceEntry>,
        filter_crc: Option<u32>,
    ) -> Result<Run, StoreError> {
        let stamp_v1 = match layout.version {
            1 => {
                let modified = file.metadata().and_then(|m| m.modified());
                Stamp::of_file_time(modified.map_err(StoreError::io(path, "read"))?)
            }
            _ => Stamp::FORGOTTEN,
        };
        Ok(Run {
            path: path.to_path_buf(),
            file,
            layout,
            fence,
            stamp_v1,
            filter_crc,
            filter: None,
        })
    }

    /// Copies its file, from the handle this run holds open, to a new file
    /// at `path`, synced.
    pub(crate) fn copy_to(&self, path: &Path) -> Result<(), StoreError> {
        let copied = File::create_new(path).and_then(|mut out| {
            let mut from = &self.file;
            from.seek(io::SeekFrom::Start(0))?;
            io::copy(&mut from, &mut out)?;
            // A version 1 run's keys are stamped with its file's time.
            out.set_modified(self.file.metadata()?.modified()?)?;
            out.sync_all()
        });
        copied.map_err(StoreError::io(path, "write"))
    }

    /// How many fingerprints it holds.
    pub(crate) fn count(&self) -> u64 {
        self.layout.count
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Reads its filter into memory, checked against its checksum, for
    /// [`Run::join`] to read no block a probe cannot be in; a run written
    /// before filters (version 2 or 1) has none to read. 2.5 bytes per
    /// print.
    pub(crate) fn load_filter(&mut self) -> Result<(), StoreError> {
        if self.filter.is_none() {
            self.filter = self.read_filter()?;
        }
        Ok(())
    }

    fn read_filter(&self) -> Result<Option<Vec<u32>>, StoreError> {
        let Some(expected_crc) = self.filter_crc else {
            return Ok(None);
        };
        let mut words = Vec::with_capacity(self.layout.blocks() as usize * FILTER_WORDS);
        let mut checksum = crc32fast::Hasher::new();
        // 64 blocks' filters a read.
        let mut chunk = vec![0u8; FILTER_BYTES as usize * 64];
        let (mut at, end) = (self.layout.filter_at(), self.layout.fence_at());
        while at < end {
            let len = (end - at).min(chunk.len() as u64) as usize;
            let bytes = &mut chunk[..len];
            read_at(&self.file, &self.path, bytes, at)?;
            checksum.update(bytes);
            words.extend(bytes.chunks_exact(4).map(|w| u32_at(w, 0)));
            at += bytes.len() as u64;
        }
        if checksum.finalize() != expected_crc {
            return Err(found_damaged(
                &self.path,
                "has a filter whose checksum does not match",
            ));
        }
        Ok(Some(words))
    }

    /// Block `b`'s filter, if loaded.
    fn block_filter(&self, b: usize) -> Option<&[u32]> {
        self.filter.as_deref().map(|filter| block_words(filter, b))
    }

    /// How many entries block `b` holds (a full block's, or the last's).
    fn block_entries(&self, b: usize) -> u64 {
        let start = (b * BLOCK_PRINTS) as u64;
        (self.layout.count - start).min(BLOCK_PRINTS as u64)
    }

    /// Reads block `b` into `block`, checked against its checksum.
    fn read_block(&self, b: usize, block: &mut Block) -> Result<(), StoreError> {
        let n = self.block_entries(b) as usize;
        let entry_bytes = self.layout.entry_bytes();
        block.bytes.resize(n * entry_bytes as usize, 0);
        let at = self.layout.block_at(b as u64);
        read_at(&self.file, &self.path, &mut block.bytes, at)?;
        let entry = self.fence[b];
        if crc(&block.bytes) != entry.crc {
            return Err(found_damaged(
                &self.path,
                format!("has a block of fingerprints (block {b}) whose checksum does not match"),
            ));
        }
        let (prints, stamps) = block.bytes.split_at(n * PRINT_BYTES as usize);
        block.prints.clear();
        block.prints.extend(
            prints
                .chunks_exact(PRINT_BYTES as usize)
                .map(|p| print_at(p, 0)),
        );
        block.stamps.clear();
        match entry_bytes {
            PRINT_BYTES => block.stamps.resize(n, self.stamp_v1),
            _ => block.stamps.extend(
                stamps
                    .chunks_exact(STAMP_BYTES as usize)
                    .map(|s| Stamp(u32_at(s, 0))),
            ),
        }
        if block.prints.first() != Some(&entry.first) {
            return Err(found_damaged(
                &self.path,
                format!("has a fence entry that disagrees with its block (block {b})"),
            ));
        }
        Ok(())
    }

    /// Calls [`Probe::found`] on each of `probes` (ascending by print) that
    /// the run holds, with its stamp. Reads only the blocks some probe falls
    /// in (and, with the filter loaded, passes the block's filter), each
    /// once, in file order: a batch as large as the run reads it
    /// sequentially, a small one a few blocks.
    pub(crate) fn join<P: Probe>(
        &self,
        probes: &mut [P],
        block: &mut Block,
        clock: &Clock,
    ) -> Result<(), StoreError> {
        let mut b = 0;
        let mut loaded = None;
        for probe in probes {
            let print = probe.print();
            // The last block whose first print is at most `print`: usually
            // this one or the next, so look there before searching.
            let next_is_past = self.fence.get(b + 1).is_none_or(|f| f.first > print);
            if !next_is_past {
                b += self.fence[b..].partition_point(|f| f.first <= print) - 1;
            }
            if self.fence.get(b).is_none_or(|f| f.first > print)
                || self
                    .block_filter(b)
                    .is_some_and(|filter| !filter::may_hold(filter, print))
            {
                continue;
            }
            if loaded != Some(b) {
                self.read_block(b, block)?;
                loaded = Some(b);
            }
            if let Ok(at) = block.prints.binary_search(&print) {
                probe.found(clock.judge(block.stamps[at]));
            }
        }
        Ok(())
    }

    /// Every entry, in order, each block checked; `each` is called with
    /// them a block at a time, and ends the reading by returning `false`.
    /// Returns whether every block was read.
    fn for_each_block(
        &self,
        mut each: impl FnMut(&Block) -> Result<bool, StoreError>,
    ) -> Result<bool, StoreError> {
        let mut block = Block::default();
        for b in 0..self.fence.len() {
            self.read_block(b, &mut block)?;
            if !each(&block)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Reads every block and checks that the prints are strictly ascending,
    /// and that its filter (if it has one) passes every print.
    pub(crate) fn verify(&self) -> Result<(), StoreError> {
        self.verify_paced(&mut |_| true).map(drop)
    }

    /// [`Run::verify`], calling `pace` with each block's bytes read (the
    /// filter's first): it may sleep, and stops the reading by returning
    /// `false`. Returns whether every block was read.
    pub(crate) fn verify_paced(
        &self,
        pace: &mut dyn FnMut(u64) -> bool,
    ) -> Result<bool, StoreError> {
        if !pace(self.layout.filter_bytes()) {
            return Ok(false);
        }
        let filter = self.read_filter()?;
        let mut last: Option<u128> = None;
        let mut b = 0;
        let entry_bytes = self.layout.entry_bytes();
        self.for_each_block(|block| {
            let words = filter.as_deref().map(|filter| block_words(filter, b));
            b += 1;
            for &print in &block.prints {
                if last.is_some_and(|last| last >= print) {
                    return Err(found_damaged(&self.path, "holds fingerprints out of order"));
                }
                if words.is_some_and(|words| !filter::may_hold(words, print)) {
                    return Err(found_damaged(
                        &self.path,
                        format!("has a filter that misses a fingerprint of block {}", b - 1),
                    ));
                }
                last = Some(print);
            }
            Ok(pace(block.prints.len() as u64 * entry_bytes))
        })
    }

    /// A reader of its prints in order, a block at a time.
    pub(crate) fn reader(&self) -> RunReader<'_> {
        RunReader {
            run: self,
            block: Block::default(),
            next_block: 0,
            at: 0,
        }
    }
}

/// Opens the run file at `path` and checks its header (made for the
/// configuration `config_id`): the file, its layout and its length.
fn open_header(path: &Path, config_id: &[u8; 16]) -> Result<(File, Layout, u64), StoreError> {
    let file = File::open(path).map_err(StoreError::io(path, "open"))?;
    let damaged = |why: &str| found_damaged(path, why);
    let len = file.metadata().map_err(StoreError::io(path, "read"))?.len();
    if len < HEADER_BYTES {
        return Err(damaged("is cut short: it has no complete header"));
    }
    let mut header = [0u8; HEADER_BYTES as usize];
    read_at(&file, path, &mut header, 0)?;
    if &header[..16] != MAGIC {
        return Err(damaged(
            "is not a run of fingerprints (its first bytes are wrong)",
        ));
    }
    if crc(&header[..60]) != u32_at(&header, 60) {
        return Err(damaged("has a header whose checksum does not match"));
    }
    let version = u32_at(&header, 16);
    if !(1..=VERSION).contains(&version) {
        return Err(StoreError::UnknownVersion {
            path: path.to_path_buf(),
            version: version.to_string(),
        });
    }
    if u32_at(&header, 20) as usize != BLOCK_PRINTS {
        return Err(damaged("has a block size this urinorm does not write"));
    }
    if &header[32..48] != config_id {
        return Err(damaged(
            "belongs to a store of another configuration than its manifest's",
        ));
    }
    let count = u64::from_le_bytes(header[24..32].try_into().expect("8 bytes"));
    Ok((file, Layout { version, count }, len))
}

/// The error for a damaged run file, recorded in its store (see
/// `damage`) so that every reader after this one fails alike.
fn found_damaged(path: &Path, why: impl Into<String>) -> StoreError {
    let why = why.into();
    super::damage::record(path, &why);
    StoreError::damaged(path, why)
}

/// Block `b`'s words of a run's whole filter.
fn block_words(filter: &[u32], b: usize) -> &[u32] {
    &filter[b * FILTER_WORDS..][..FILTER_WORDS]
}

fn read_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<(), StoreError> {
    file.read_exact_at(buf, offset).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => found_damaged(path, "is cut short"),
        _ => StoreError::io(path, "read")(e),
    })
}

/// Entries in ascending order of print, each with its stamp: what a
/// merge of runs reads.
pub(crate) trait Entries {
    /// The next print and its stamp, or `None` past the last.
    fn next_entry(&mut self) -> Result<Option<(u128, Stamp)>, StoreError>;
}

/// A run's entries in ascending order of print (for merging runs).
pub(crate) struct RunReader<'r> {
    run: &'r Run,
    block: Block,
    next_block: usize,
    at: usize,
}

impl Entries for RunReader<'_> {
    fn next_entry(&mut self) -> Result<Option<(u128, Stamp)>, StoreError> {
        if self.at == self.block.prints.len() {
            if self.next_block == self.run.fence.len() {
                return Ok(None);
            }
            self.run.read_block(self.next_block, &mut self.block)?;
            self.next_block += 1;
            self.at = 0;
        }
        self.at += 1;
        let at = self.at - 1;
        Ok(Some((self.block.prints[at], self.block.stamps[at])))
    }
}

/// A run's entries in ascending order of print, as [`RunReader`] gives
/// them, less every damaged block's (for salvage): those are counted, and
/// the first damage is kept to be told.
pub(crate) struct Salvaging<'r> {
    reader: RunReader<'r>,
    /// The last print given: a block that does not come after it is
    /// damaged too.
    last: Option<u128>,
    pub(crate) blocks_lost: u64,
    pub(crate) entries_lost: u64,
    pub(crate) first_damage: Option<StoreError>,
}

impl<'r> Salvaging<'r> {
    pub(crate) fn new(run: &'r Run) -> Salvaging<'r> {
        Salvaging {
            reader: run.reader(),
            last: None,
            blocks_lost: 0,
            entries_lost: 0,
            first_damage: None,
        }
    }

    /// Reads the next block that is intact; `false` past the last.
    fn next_intact_block(&mut self) -> Result<bool, StoreError> {
        let reader = &mut self.reader;
        while reader.next_block < reader.run.fence.len() {
            let b = reader.next_block;
            reader.next_block += 1;
            reader.at = 0;
            let read = reader.run.read_block(b, &mut reader.block).and_then(|()| {
                match (self.last, reader.block.prints.first()) {
                    (Some(last), Some(&first)) if first <= last => Err(StoreError::damaged(
                        reader.run.path(),
                        format!("has a block (block {b}) out of order with the one before"),
                    )),
                    _ => Ok(()),
                }
            });
            match read {
                Ok(()) => return Ok(true),
                Err(e @ StoreError::Damaged { .. }) => {
                    reader.block.prints.clear();
                    self.blocks_lost += 1;
                    self.entries_lost += reader.run.block_entries(b);
                    self.first_damage.get_or_insert(e);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }
}

impl Entries for Salvaging<'_> {
    fn next_entry(&mut self) -> Result<Option<(u128, Stamp)>, StoreError> {
        if self.reader.at == self.reader.block.prints.len() && !self.next_intact_block()? {
            return Ok(None);
        }
        let block = &self.reader.block;
        let entry = (block.prints[self.reader.at], block.stamps[self.reader.at]);
        self.reader.at += 1;
        self.last = Some(entry.0);
        Ok(Some(entry))
    }
}

/// A run being written: entries go in in ascending order of print; the
/// file is complete and synced when [`RunWriter::finish`] returns.
pub(crate) struct RunWriter {
    out: BufWriter<File>,
    path: PathBuf,
    config_id: [u8; 16],
    count: u64,
    last: Option<u128>,
    /// The current block's prints, stamps and filter.
    block: Vec<u8>,
    stamps: Vec<u8>,
    filter: Vec<u32>,
    /// The finished blocks' filters, until the last block is written: an
    /// unnamed file beside the run (gone with the process, however it ends),
    /// so that memory stays a block's whatever the run's size.
    filters: BufWriter<File>,
    filters_crc: crc32fast::Hasher,
    fence: Vec<u8>,
}

impl RunWriter {
    /// Writes a whole run at `path` (replacing any file there): what
    /// `fill` pushes, synced. Returns its entries. On any error the
    /// partial file is removed: a failed commit (a full disk) leaves
    /// nothing behind in the store.
    pub(crate) fn write(
        path: &Path,
        config_id: [u8; 16],
        fill: impl FnOnce(&mut RunWriter) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let written = RunWriter::create(path, config_id).and_then(|mut writer| {
            fill(&mut writer)?;
            let entries = writer.count();
            writer.finish().map(|_| entries)
        });
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// A new run file at `path` (replacing any file there).
    fn create(path: &Path, config_id: [u8; 16]) -> Result<RunWriter, StoreError> {
        let file = File::create(path).map_err(StoreError::io(path, "create"))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The header is written last, once the count is known.
        out.write_all(&[0; HEADER_BYTES as usize])
            .map_err(StoreError::io(path, "write"))?;
        let beside = path.parent().unwrap_or(Path::new("."));
        let filters = tempfile::tempfile_in(beside).map_err(StoreError::io(path, "create"))?;
        Ok(RunWriter {
            out,
            path: path.to_path_buf(),
            config_id,
            count: 0,
            last: None,
            block: Vec::with_capacity(BLOCK_PRINTS * PRINT_BYTES as usize),
            stamps: Vec::with_capacity(BLOCK_PRINTS * STAMP_BYTES as usize),
            filter: vec![0; FILTER_WORDS],
            filters: BufWriter::with_capacity(1 << 20, filters),
            filters_crc: crc32fast::Hasher::new(),
            fence: Vec::new(),
        })
    }

    /// Adds `print` with `stamp`; `print` must not be below the last one
    /// added, and a print equal to the last is held once, with the first
    /// stamp.
    pub(crate) fn push(&mut self, print: u128, stamp: Stamp) -> Result<(), StoreError> {
        match self.last {
            Some(last) if last == print => return Ok(()),
            Some(last) if last > print => {
                return Err(StoreError::Io {
                    path: self.path.clone(),
                    action: "write",
                    source: io::Error::other("internal error: fingerprints out of order"),
                });
            }
            _ => {}
        }
        self.last = Some(print);
        if self.block.is_empty() {
            self.fence.extend_from_slice(&print.to_be_bytes());
        }
        self.block.extend_from_slice(&print.to_be_bytes());
        self.stamps.extend_from_slice(&stamp.0.to_le_bytes());
        filter::insert(&mut self.filter, print);
        self.count += 1;
        if self.count.is_multiple_of(BLOCK_PRINTS as u64) {
            self.end_block()?;
        }
        Ok(())
    }

    fn end_block(&mut self) -> Result<(), StoreError> {
        self.block.append(&mut self.stamps);
        let checksum = crc(&self.block).to_le_bytes();
        self.fence.extend_from_slice(&checksum);
        self.block.extend_from_slice(&checksum);
        self.out
            .write_all(&self.block)
            .map_err(StoreError::io(&self.path, "write"))?;
        self.block.clear();
        // The block's bytes are reused for its filter's.
        self.block
            .extend(self.filter.iter().flat_map(|w| w.to_le_bytes()));
        self.filters_crc.update(&self.block);
        self.filters
            .write_all(&self.block)
            .map_err(StoreError::io(&self.path, "write"))?;
        self.block.clear();
        self.filter.fill(0);
        Ok(())
    }

    /// How many prints went in.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Writes the filters, the fence, the trailer and the header, and syncs
    /// the file.
    pub(crate) fn finish(mut self) -> Result<u64, StoreError> {
        if !self.block.is_empty() {
            self.end_block()?;
        }
        let write = StoreError::io(&self.path, "write");
        let mut header = [0u8; HEADER_BYTES as usize];
        header[..16].copy_from_slice(MAGIC);
        header[16..20].copy_from_slice(&VERSION.to_le_bytes());
        header[20..24].copy_from_slice(&(BLOCK_PRINTS as u32).to_le_bytes());
        header[24..32].copy_from_slice(&self.count.to_le_bytes());
        header[32..48].copy_from_slice(&self.config_id);
        let header_crc = crc(&header[..60]);
        header[60..].copy_from_slice(&header_crc.to_le_bytes());
        let fence_crc = crc(&self.fence);
        let filters_crc = self.filters_crc.finalize();
        let written = (|| {
            let mut filters = self.filters.into_inner().map_err(|e| e.into_error())?;
            filters.seek(io::SeekFrom::Start(0))?;
            io::copy(&mut filters, &mut self.out)?;
            self.out.write_all(&self.fence)?;
            self.out.write_all(&filters_crc.to_le_bytes())?;
            self.out.write_all(&fence_crc.to_le_bytes())?;
            self.out.write_all(TRAILER)?;
            let file = self.out.into_inner().map_err(|e| e.into_error())?;
            file.write_all_at(&header, 0)?;
            file.sync_all()
        })();
        written.map_err(write)?;
        let layout = Layout {
            version: VERSION,
            count: self.count,
        };
        Ok(layout
            .file_len()
            .expect("a run that was written fits its size"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Asked, Holding};

    const CONFIG: [u8; 16] = [7; 16];
    const STAMP: Stamp = Stamp(1_795_000_000);

    fn write_run(path: &Path, prints: &[u128]) -> u64 {
        let mut writer = RunWriter::create(path, CONFIG).unwrap();
        for &p in prints {
            writer.push(p, STAMP).unwrap();
        }
        writer.finish().unwrap()
    }

    fn asked(print: u128) -> Asked {
        Asked {
            at: 0,
            print,
            holding: Holding::Absent,
        }
    }

    fn join(run: &Run, probes: &mut [Asked]) {
        run.join(probes, &mut Block::default(), &Clock::at(STAMP))
            .unwrap();
    }

    /// A spread of prints: `n` values, every third multiple of a large odd number.
    fn prints(n: u64) -> Vec<u128> {
        (0..n)
            .map(|i| u128::from(i * 3) * 0x9e37_79b9_7f4a_7c15)
            .collect()
    }

    #[test]
    fn joins_agree_with_a_set_across_block_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        let held = prints(3 * BLOCK_PRINTS as u64 + 17);
        let len = write_run(&path, &held);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
        let run = Run::open(&path, &CONFIG).unwrap();
        assert_eq!(run.count(), held.len() as u64);
        run.verify().unwrap();
        // Probes: every held print, the gaps between them, and both ends.
        let mut probes: Vec<Asked> = (0..held.len() as u64 * 3 + 3)
            .map(|i| asked(u128::from(i) * 0x9e37_79b9_7f4a_7c15))
            .collect();
        probes.push(asked(u128::MAX));
        join(&run, &mut probes);
        for p in &probes {
            assert_eq!(
                p.holding == Holding::Held,
                held.binary_search(&p.print).is_ok(),
                "{:x}",
                p.print
            );
        }
        // A sparse batch reads only its blocks, and finds the same.
        let mut sparse = vec![asked(held[2 * BLOCK_PRINTS + 5])];
        join(&run, &mut sparse);
        assert_eq!(sparse[0].holding, Holding::Held);
        // With the filter loaded, every answer is the same.
        let mut run = run;
        run.load_filter().unwrap();
        let mut again: Vec<Asked> = probes.iter().map(|p| asked(p.print)).collect();
        join(&run, &mut again);
        let answers = |probes: &[Asked]| probes.iter().map(|p| p.holding).collect::<Vec<_>>();
        assert_eq!(answers(&again), answers(&probes));
    }

    #[test]
    fn a_reader_gives_every_print_once_and_equal_pushes_are_held_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        let mut writer = RunWriter::create(&path, CONFIG).unwrap();
        for (p, s) in [(1u128, 7), (1, 8), (2, 0), (5, 9), (5, 1), (9, 3)] {
            writer.push(p, Stamp(s)).unwrap();
        }
        assert!(writer.push(3, STAMP).is_err(), "out of order");
        writer.finish().unwrap();
        let run = Run::open(&path, &CONFIG).unwrap();
        let mut reader = run.reader();
        let mut read = Vec::new();
        while let Some((p, s)) = reader.next_entry().unwrap() {
            read.push((p, s.0));
        }
        assert_eq!(read, [(1, 7), (2, 0), (5, 9), (9, 3)]);
    }

    /// A run of an older version, as that version wrote it: prints only in
    /// version 1, prints then stamps per block in version 2; no filter.
    fn old_run(prints: &[u128], version: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; HEADER_BYTES as usize];
        let mut fence = Vec::new();
        for block in prints.chunks(BLOCK_PRINTS) {
            let mut body: Vec<u8> = block.iter().flat_map(|p| p.to_be_bytes()).collect();
            if version == 2 {
                body.extend(block.iter().flat_map(|_| STAMP.0.to_le_bytes()));
            }
            fence.extend_from_slice(&block[0].to_be_bytes());
            fence.extend_from_slice(&crc(&body).to_le_bytes());
            bytes.extend_from_slice(&body);
        }
        let fence_crc = crc(&fence);
        bytes.extend_from_slice(&fence);
        bytes.extend_from_slice(&fence_crc.to_le_bytes());
        bytes.extend_from_slice(TRAILER);
        bytes[..16].copy_from_slice(MAGIC);
        bytes[16..20].copy_from_slice(&version.to_le_bytes());
        bytes[20..24].copy_from_slice(&(BLOCK_PRINTS as u32).to_le_bytes());
        bytes[24..32].copy_from_slice(&(prints.len() as u64).to_le_bytes());
        bytes[32..48].copy_from_slice(&CONFIG);
        let header_crc = crc(&bytes[..60]);
        bytes[60..64].copy_from_slice(&header_crc.to_le_bytes());
        let count = prints.len() as u64;
        assert_eq!(
            Some(bytes.len() as u64),
            Layout { version, count }.file_len()
        );
        bytes
    }

    fn entries(run: &Run) -> Vec<(u128, Stamp)> {
        let mut reader = run.reader();
        let mut read = Vec::new();
        while let Some(entry) = reader.next_entry().unwrap() {
            read.push(entry);
        }
        read
    }

    /// A run of version 1 (prints only, before keys had times) is read,
    /// each key stamped with the file's time.
    #[test]
    fn a_version_1_run_is_read_with_its_files_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        let prints = prints(BLOCK_PRINTS as u64 + 3);
        std::fs::write(&path, old_run(&prints, 1)).unwrap();
        let written = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_secs(u64::from(STAMP.0) - 50);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(written)
            .unwrap();
        let run = Run::open(&path, &CONFIG).unwrap();
        run.verify().unwrap();
        let expected: Vec<(u128, Stamp)> =
            prints.iter().map(|&p| (p, Stamp(STAMP.0 - 50))).collect();
        assert_eq!(entries(&run), expected);
    }

    /// A run of version 2 (no filter) is read, and answers lookups with its
    /// filter asked for: it has none, so every lookup reads its block.
    #[test]
    fn a_version_2_run_is_read_without_a_filter() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        let prints = prints(BLOCK_PRINTS as u64 + 3);
        std::fs::write(&path, old_run(&prints, 2)).unwrap();
        let mut run = Run::open(&path, &CONFIG).unwrap();
        run.verify().unwrap();
        let expected: Vec<(u128, Stamp)> = prints.iter().map(|&p| (p, STAMP)).collect();
        assert_eq!(entries(&run), expected);
        run.load_filter().unwrap();
        let mut probes = [asked(prints[BLOCK_PRINTS + 1]), asked(prints[7] + 1)];
        join(&run, &mut probes);
        assert_eq!(probes.map(|p| p.holding), [Holding::Held, Holding::Absent]);
    }

    #[test]
    fn an_empty_run_holds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        write_run(&path, &[]);
        let run = Run::open(&path, &CONFIG).unwrap();
        let mut probes = [asked(0)];
        join(&run, &mut probes);
        assert_eq!(probes[0].holding, Holding::Absent);
        run.verify().unwrap();
    }

    /// Every way a run can be damaged is an error naming it, never a panic.
    #[test]
    fn damage_is_caught_and_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.run");
        let len = write_run(&path, &prints(2 * BLOCK_PRINTS as u64 + 3)) as usize;
        let good = std::fs::read(&path).unwrap();
        let mut cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..len - 1].to_vec(), "cut short"),
            (good[..40].to_vec(), "no complete header"),
            ([&good[..], b"x"].concat(), "bytes long"),
        ];
        for (at, what) in [
            (3, "first bytes"),
            (30, "header whose checksum"),
            (64 + 20 * 5000 + 3, "block 1"),
            (64 + 20 * (2 * BLOCK_PRINTS + 3) + 100, "filter"),
            (len - 30, "fence"),
        ] {
            let mut bad = good.clone();
            bad[at] ^= 0x40;
            cases.push((bad, what));
        }
        for (bytes, what) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let result = Run::open(&path, &CONFIG).and_then(|run| run.verify());
            let message = result.unwrap_err().to_string();
            assert!(message.contains("r.run"), "{message}");
            assert!(message.contains(what), "{what}: {message}");
        }
        std::fs::write(&path, &good).unwrap();
        let other = Run::open(&path, &[8; 16]).unwrap_err().to_string();
        assert!(other.contains("another configuration"), "{other}");
    }
}
