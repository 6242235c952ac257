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
//!                    stamps, 4 bytes each, from version 5 their sites, 8
//!                    bytes each, then the CRC-32 of them all
//! filter   one per block: its prints' filter (`filter`), 10 KiB of
//!                    32-bit words, the last block's too however short
//! fence    one entry per block: its first print (16) and the CRC-32 of
//!                    its bytes, prints and stamps (4)
//! trailer  CRC-32 of the filter (4), CRC-32 of the fence (4), "done"
//! ```
//!
//! A stamp is the [`Stamp`] of the commit that admitted the key (seconds
//! since the Unix epoch), or 0 for a key forgotten: a tombstone, which
//! hides the key in older runs. A site is the fingerprint of the key's
//! host or domain ([`Entry::site`]) in a store that keeps budgets, 0 for
//! none; a store without budgets writes version 4, which has no sites.
//! Integers are little-endian; checksums are
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
//! Older versions are read as well (their entries have no site). Version 3 has no checksum after each
//! block (a run of it cut short is lost whole). Version 2 has no filter (and no
//! filter checksum in its trailer): its lookups read their blocks. Version
//! 1 (before keys had times) has prints only, each stamped with the file's
//! modification time, which is no earlier than the commit that admitted it
//! (a key so never expires early).
//!
//! It knows fingerprints, stamps and bytes on disk; not keys, manifests or
//! locks.
//!
//! Here are the format and a run opened (its header, length and fence
//! checked); `read` reads its blocks and entries, `verify` checks and
//! copies it whole, `write` writes one.

mod read;
#[cfg(test)]
mod tests;
mod verify;
mod write;

pub(crate) use read::{Entries, Salvaging};
pub(crate) use write::RunWriter;

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::filter::FILTER_WORDS;
use super::{Stamp, StoreError};

const MAGIC: &[u8; 16] = b"urinorm-seen-run";
/// The version written by a store that keeps sites, and by one that does
/// not; versions 1 (no stamps), 2 (no filter) and 3 (no checksum after
/// each block) are read too.
const VERSION: u32 = 5;
const VERSION_WITHOUT_SITES: u32 = 4;
const HEADER_BYTES: u64 = 64;
const PRINT_BYTES: u64 = 16;
const STAMP_BYTES: u64 = 4;
const SITE_BYTES: u64 = 8;
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

/// One entry of a run: a key's fingerprint, the stamp of the commit that
/// admitted it (or a tombstone's), and its site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub print: u128,
    pub stamp: Stamp,
    /// The fingerprint of the key's site (its host or domain, as the store
    /// counts budgets by), or [`NO_SITE`].
    pub site: u64,
}

/// The site of a key admitted without one: a run before version 5, a
/// store that keeps no budgets, a key with no host.
pub const NO_SITE: u64 = 0;

/// One block read from a run, reused from block to block.
#[derive(Default)]
pub(crate) struct Block {
    bytes: Vec<u8>,
    prints: Vec<u128>,
    stamps: Vec<Stamp>,
    /// Empty for a run without sites.
    sites: Vec<u64>,
}

impl Block {
    /// Entry `at`.
    fn entry(&self, at: usize) -> Entry {
        Entry {
            print: self.prints[at],
            stamp: self.stamps[at],
            site: self.sites.get(at).copied().unwrap_or(NO_SITE),
        }
    }
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

    /// The bytes of one entry: a print, from version 2 its stamp, from
    /// version 5 its site.
    fn entry_bytes(&self) -> u64 {
        match self.version {
            1 => PRINT_BYTES,
            2..=4 => PRINT_BYTES + STAMP_BYTES,
            _ => PRINT_BYTES + STAMP_BYTES + SITE_BYTES,
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

    /// How many fingerprints it holds.
    pub(crate) fn count(&self) -> u64 {
        self.layout.count
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
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

fn read_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<(), StoreError> {
    file.read_exact_at(buf, offset).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => found_damaged(path, "is cut short"),
        _ => StoreError::io(path, "read")(e),
    })
}
