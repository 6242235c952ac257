//! A run checked whole (every block's checksum and order, its filter
//! against every print), at a pace the caller sets, and copied from the
//! handle it holds open. It knows blocks as `read` gives them; not the
//! store's count of keys.

use std::fs::File;
use std::io::{self, Seek};
use std::path::Path;

use super::read::block_words;
use super::{Block, Run, found_damaged};
use crate::store::StoreError;
use crate::store::filter;

impl Run {
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
}
