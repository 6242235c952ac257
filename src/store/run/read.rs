//! A run read: its filter loaded, a block read and checked, a batch of
//! probes joined against the blocks they fall in, and its entries in
//! order (whole, or less the damaged blocks, for salvage). It knows the
//! layout on disk; not how the store merges what it reads.

use super::{
    BLOCK_PRINTS, Block, Entry, FILTER_BYTES, PRINT_BYTES, Run, SITE_BYTES, STAMP_BYTES, crc,
    found_damaged, print_at, read_at, u32_at,
};
use crate::store::filter::{self, FILTER_WORDS};
use crate::store::{Clock, Probe, Stamp, StoreError};

impl Run {
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

    pub(super) fn read_filter(&self) -> Result<Option<Vec<u32>>, StoreError> {
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
    pub(super) fn read_block(&self, b: usize, block: &mut Block) -> Result<(), StoreError> {
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
        let (prints, rest) = block.bytes.split_at(n * PRINT_BYTES as usize);
        let (stamps, sites) = rest.split_at(rest.len().min(n * STAMP_BYTES as usize));
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
        block.sites.clear();
        block.sites.extend(
            sites
                .chunks_exact(SITE_BYTES as usize)
                .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes"))),
        );
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
                let entry = block.entry(at);
                probe.found(entry, clock.judge(entry.stamp));
            }
        }
        Ok(())
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

/// Block `b`'s words of a run's whole filter.
pub(super) fn block_words(filter: &[u32], b: usize) -> &[u32] {
    &filter[b * FILTER_WORDS..][..FILTER_WORDS]
}

/// Entries in ascending order of print: what a merge of runs reads.
pub(crate) trait Entries {
    /// The next entry, or `None` past the last.
    fn next_entry(&mut self) -> Result<Option<Entry>, StoreError>;
}

/// A run's entries in ascending order of print (for merging runs).
pub(crate) struct RunReader<'r> {
    run: &'r Run,
    block: Block,
    next_block: usize,
    at: usize,
}

impl Entries for RunReader<'_> {
    fn next_entry(&mut self) -> Result<Option<Entry>, StoreError> {
        if self.at == self.block.prints.len() {
            if self.next_block == self.run.fence.len() {
                return Ok(None);
            }
            self.run.read_block(self.next_block, &mut self.block)?;
            self.next_block += 1;
            self.at = 0;
        }
        self.at += 1;
        Ok(Some(self.block.entry(self.at - 1)))
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
    fn next_entry(&mut self) -> Result<Option<Entry>, StoreError> {
        if self.reader.at == self.reader.block.prints.len() && !self.next_intact_block()? {
            return Ok(None);
        }
        let entry = self.reader.block.entry(self.reader.at);
        self.reader.at += 1;
        self.last = Some(entry.print);
        Ok(Some(entry))
    }
}
