//! A run written: entries in ascending order of print, a block at a
//! time, then the filters, the fence, the trailer and, last, the header,
//! synced. It knows the format; not where the entries come from.

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::{
    BLOCK_PRINTS, Entry, HEADER_BYTES, Layout, MAGIC, PRINT_BYTES, SITE_BYTES, STAMP_BYTES,
    TRAILER, VERSION, VERSION_WITHOUT_SITES, crc,
};
use crate::store::StoreError;
use crate::store::filter::{self, FILTER_WORDS};

/// A run being written: entries go in in ascending order of print; the
/// file is complete and synced when [`RunWriter::finish`] returns.
pub(crate) struct RunWriter {
    out: BufWriter<File>,
    path: PathBuf,
    config_id: [u8; 16],
    /// The version written: with sites or without.
    version: u32,
    count: u64,
    last: Option<u128>,
    /// The current block's prints, stamps, sites and filter.
    block: Vec<u8>,
    stamps: Vec<u8>,
    sites: Vec<u8>,
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
    /// `fill` pushes, synced, with the entries' sites when `sites`. Returns
    /// its entries. On any error the partial file is removed: a failed
    /// commit (a full disk) leaves nothing behind in the store.
    pub(crate) fn write(
        path: &Path,
        config_id: [u8; 16],
        sites: bool,
        fill: impl FnOnce(&mut RunWriter) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let written = RunWriter::create(path, config_id, sites).and_then(|mut writer| {
            fill(&mut writer)?;
            let entries = writer.count();
            writer.finish().map(|_| entries)
        });
        if written.is_err() {
            let _ = std::fs::remove_file(path);
        }
        written
    }

    /// A new run file at `path` (replacing any file there), with sites or
    /// without.
    pub(super) fn create(
        path: &Path,
        config_id: [u8; 16],
        sites: bool,
    ) -> Result<RunWriter, StoreError> {
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
            version: if sites {
                VERSION
            } else {
                VERSION_WITHOUT_SITES
            },
            count: 0,
            last: None,
            block: Vec::with_capacity(BLOCK_PRINTS * PRINT_BYTES as usize),
            stamps: Vec::with_capacity(BLOCK_PRINTS * STAMP_BYTES as usize),
            sites: Vec::with_capacity(match sites {
                true => BLOCK_PRINTS * SITE_BYTES as usize,
                false => 0,
            }),
            filter: vec![0; FILTER_WORDS],
            filters: BufWriter::with_capacity(1 << 20, filters),
            filters_crc: crc32fast::Hasher::new(),
            fence: Vec::new(),
        })
    }

    /// Adds `entry`; its print must not be below the last one added, and
    /// a print equal to the last is held once, the first entry's. A run
    /// without sites drops the entry's.
    pub(crate) fn push(&mut self, entry: Entry) -> Result<(), StoreError> {
        let Entry { print, stamp, site } = entry;
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
        if self.version == VERSION {
            self.sites.extend_from_slice(&site.to_le_bytes());
        }
        filter::insert(&mut self.filter, print);
        self.count += 1;
        if self.count.is_multiple_of(BLOCK_PRINTS as u64) {
            self.end_block()?;
        }
        Ok(())
    }

    fn end_block(&mut self) -> Result<(), StoreError> {
        self.block.append(&mut self.stamps);
        self.block.append(&mut self.sites);
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
        header[16..20].copy_from_slice(&self.version.to_le_bytes());
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
            version: self.version,
            count: self.count,
        };
        Ok(layout
            .file_len()
            .expect("a run that was written fits its size"))
    }
}
