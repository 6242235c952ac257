//! A run against a seen store ([`crate::seen`]): whether a class was
//! admitted by an earlier run is known only once the whole batch is read
//! and its fingerprints are joined with the store in one sorted pass (the
//! store is never probed key by key). So the output is spooled to an
//! unnamed temporary file in the meantime; once the join has said which
//! classes the store holds, the spool is copied to the output without them,
//! and the classes it did not hold are staged as the store's next run.
//!
//! It knows classes, their fingerprints and the spool's lines; not how a
//! class was decided, nor how the store keeps its files.

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use rayon::prelude::*;

use crate::fingerprint::fingerprint;
use crate::seen::{Probe, Store, StoreError};

/// A class's fingerprint, its number in output order and its size in
/// lines: 24 bytes, sorted by fingerprint for the join.
#[derive(Clone, Copy, Debug)]
struct ClassPrint {
    high: u64,
    low: u64,
    /// The class's number; its top bit is set once the store holds it.
    number: u32,
    size: u32,
}

const HELD: u32 = 1 << 31;

impl ClassPrint {
    fn print(&self) -> u128 {
        (u128::from(self.high) << 64) | u128::from(self.low)
    }

    fn is_held(&self) -> bool {
        self.number & HELD != 0
    }
}

impl Probe for ClassPrint {
    fn print(&self) -> u128 {
        ClassPrint::print(self)
    }

    fn held(&mut self) {
        self.number |= HELD;
    }
}

/// The fingerprints of a run's classes, in output order as they are added.
#[derive(Default)]
pub(crate) struct Classes {
    prints: Vec<ClassPrint>,
    /// What did not fit a [`ClassPrint`], if anything did not.
    too_large: Option<&'static str>,
}

/// Classes fingerprinted per parallel task.
const PRINTS_PER_TASK: usize = 1 << 16;

impl Classes {
    /// Adds the classes `keys` yields (key and size), fingerprinting them on
    /// the current pool.
    pub(crate) fn extend<'k>(&mut self, keys: impl Iterator<Item = (&'k [u8], u64)>) {
        let mut keys = keys.peekable();
        let mut batch = Vec::with_capacity(PRINTS_PER_TASK);
        while keys.peek().is_some() {
            batch.clear();
            batch.extend(keys.by_ref().take(PRINTS_PER_TASK));
            let first = self.prints.len();
            let made: Vec<(u128, u64)> = batch
                .par_iter()
                .with_min_len(1024)
                .map(|&(key, size)| (u128::from_be_bytes(fingerprint(key)), size))
                .collect();
            for (i, (print, size)) in made.into_iter().enumerate() {
                self.add(first + i, print, size);
            }
        }
    }

    /// Adds one class.
    pub(crate) fn push(&mut self, key: &[u8], size: u64) {
        self.add(
            self.prints.len(),
            u128::from_be_bytes(fingerprint(key)),
            size,
        );
    }

    fn add(&mut self, number: usize, print: u128, size: u64) {
        let number = match u32::try_from(number) {
            Ok(n) if n & HELD == 0 => n,
            _ => {
                self.too_large = Some("more than 2147483647 distinct keys");
                return;
            }
        };
        let Ok(size) = u32::try_from(size) else {
            self.too_large = Some("a key on more than 4294967295 lines");
            return;
        };
        self.prints.push(ClassPrint {
            high: (print >> 64) as u64,
            low: print as u64,
            number,
            size,
        });
    }
}

/// What the store said of a run's classes.
pub(crate) struct Verdicts {
    /// One bit per class, by number: set where the store holds it.
    held: Vec<u64>,
    pub(crate) classes: u64,
    pub(crate) lines: u64,
}

impl Verdicts {
    fn is_held(&self, class: u64) -> bool {
        self.held
            .get((class / 64) as usize)
            .is_some_and(|word| word >> (class % 64) & 1 == 1)
    }
}

/// Joins `classes` with `store` on `pool`; when the store is open for
/// writing, stages the classes it does not hold as its next run.
pub(crate) fn check(
    pool: &rayon::ThreadPool,
    store: &mut Store,
    classes: Classes,
) -> Result<Verdicts, StoreError> {
    if let Some(what) = classes.too_large {
        return Err(StoreError::TooLarge { what });
    }
    let mut prints = classes.prints;
    pool.install(|| prints.par_sort_unstable_by_key(ClassPrint::print));
    pool.install(|| store.lookup(&mut prints))?;
    let mut verdicts = Verdicts {
        held: vec![0; prints.len().div_ceil(64)],
        classes: 0,
        lines: 0,
    };
    for class in prints.iter().filter(|c| c.is_held()) {
        let number = class.number & !HELD;
        verdicts.held[number as usize / 64] |= 1 << (number % 64);
        verdicts.classes += 1;
        verdicts.lines += u64::from(class.size);
    }
    if store.is_writable() {
        store.stage(
            prints
                .iter()
                .filter(|c| !c.is_held())
                .map(ClassPrint::print),
        )?;
    }
    Ok(verdicts)
}

/// The output while the run is read: an unnamed temporary file (gone with
/// the process, however it ends).
pub(crate) struct Spool {
    file: File,
    /// Where it is, for messages.
    dir: String,
}

impl Spool {
    pub(crate) fn create(dir: &Path) -> io::Result<Spool> {
        Ok(Spool {
            file: tempfile::tempfile_in(dir)?,
            dir: dir.display().to_string(),
        })
    }

    fn error(&self, e: io::Error) -> io::Error {
        io::Error::new(
            e.kind(),
            format!(
                "{e} (in the temporary copy of the output under '{}'; choose a disk with room with --temp-dir)",
                crate::escape::escape_str(&self.dir)
            ),
        )
    }

    /// Copies the spooled lines to `out`, leaving out the classes the store
    /// holds; `header_marks` says where header lines are (before how many
    /// class lines each came). Returns the bytes written.
    pub(crate) fn write_unheld(
        mut self,
        verdicts: &Verdicts,
        header_marks: &[u64],
        out: &mut dyn Write,
    ) -> io::Result<u64> {
        self.file.rewind().map_err(|e| self.error(e))?;
        let mut marks = header_marks.iter().copied().peekable();
        let mut class = 0u64;
        let mut keep = |_line: &[u8]| {
            if marks.next_if_eq(&class).is_some() {
                return true;
            }
            class += 1;
            !verdicts.is_held(class - 1)
        };
        let mut block = vec![0u8; COPY_BYTES];
        let mut kept = Vec::with_capacity(COPY_BYTES);
        let (mut filled, mut written) = (0, 0u64);
        loop {
            let n = self
                .file
                .read(&mut block[filled..])
                .map_err(|e| self.error(e))?;
            filled += n;
            let complete = match memchr::memrchr(b'\n', &block[..filled]) {
                Some(end) => end + 1,
                None if n == 0 => filled,
                None if filled == block.len() => {
                    // A line longer than the block: grow it.
                    block.resize(block.len() * 2, 0);
                    continue;
                }
                None => continue,
            };
            kept.clear();
            for line in block[..complete].split_inclusive(|&b| b == b'\n') {
                if keep(line) {
                    kept.extend_from_slice(line);
                }
            }
            out.write_all(&kept)?;
            written += kept.len() as u64;
            block.copy_within(complete..filled, 0);
            filled -= complete;
            if n == 0 && filled == 0 {
                return Ok(written);
            }
        }
    }
}

/// How much of the spool is read at a time.
const COPY_BYTES: usize = 1 << 20;

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf).map_err(|e| self.error(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
