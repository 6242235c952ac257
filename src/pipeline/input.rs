//! Inputs: files memory-mapped when they are regular files and the caller
//! allows it ([`MmapChoice`]), read whole otherwise, and standard input left
//! to be read in blocks by the chunker; and splitting bytes into lines.
//!
//! It knows files and lines, nothing of what a line holds.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use memmap2::Mmap;

/// The name that means standard input.
pub const STDIN: &str = "-";

/// One input, opened: its name for messages and its bytes.
pub struct Input {
    name: String,
    data: Data,
}

enum Data {
    Mapped(Mmap),
    Owned(Vec<u8>),
    /// Standard input, read in blocks as the run goes (see `reader`).
    Stdin,
}

/// Whether files may be memory-mapped: the caller opts in, because a map is
/// only as stable as the file under it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmapChoice {
    allowed: bool,
}

impl MmapChoice {
    /// Map regular files: the fastest way to read them (no copy, every
    /// worker reading the page cache directly).
    ///
    /// # Safety
    ///
    /// While a file is mapped, another process that truncates or rewrites
    /// it changes what the run reads, or ends the process with SIGBUS. The
    /// caller must be willing to accept that for the files it opens:
    /// ripgrep and `sort` make that trade for the files their user names.
    pub unsafe fn auto() -> MmapChoice {
        MmapChoice { allowed: true }
    }

    /// Never map: files are read into memory whole.
    pub fn never() -> MmapChoice {
        MmapChoice { allowed: false }
    }
}

impl Input {
    /// Opens `name` (`-` is standard input); a regular file is mapped when
    /// `mmap` allows it, and read whole otherwise.
    pub fn open(name: &str, mmap: MmapChoice) -> Result<Input, InputError> {
        let fail = |source| InputError {
            name: name.to_string(),
            source,
        };
        let data = if name == STDIN {
            Data::Stdin
        } else {
            let file = File::open(Path::new(name)).map_err(fail)?;
            let meta = file.metadata().map_err(fail)?;
            if meta.is_dir() {
                return Err(fail(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                )));
            }
            if mmap.allowed && meta.is_file() && meta.len() > 0 {
                // SAFETY: the map is read-only, and the caller accepted what
                // a file changed under it can do (`MmapChoice::auto`).
                // Populating maps every page up front, in bulk: far cheaper
                // than one page fault per 4 KiB as the workers reach them.
                let map =
                    unsafe { memmap2::MmapOptions::new().populate().map(&file) }.map_err(fail)?;
                // The map is read front to back once: let the kernel read ahead.
                // (Advice only; a kernel that ignores it changes nothing.)
                #[cfg(unix)]
                let _ = map.advise(memmap2::Advice::Sequential);
                Data::Mapped(map)
            } else {
                // Empty files cannot be mapped; pipes and devices cannot
                // either; and the caller may not allow it.
                let mut bytes = Vec::new();
                (&file).read_to_end(&mut bytes).map_err(fail)?;
                Data::Owned(bytes)
            }
        };
        Ok(Input {
            name: display_name(name),
            data,
        })
    }

    /// The input's name as messages show it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All of the input's bytes, or `None` for standard input, which is
    /// read as a stream.
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Mapped(map) => Some(map),
            Data::Owned(bytes) => Some(bytes),
            Data::Stdin => None,
        }
    }

    /// Whether this is standard input.
    pub fn is_stdin(&self) -> bool {
        matches!(self.data, Data::Stdin)
    }
}

/// The inputs' total size, when every input is a file (standard input has
/// no known size).
pub fn total_bytes(inputs: &[Input]) -> Option<u64> {
    inputs
        .iter()
        .map(|i| i.bytes().map(|b| b.len() as u64))
        .sum()
}

fn display_name(name: &str) -> String {
    if name == STDIN {
        "<stdin>".to_string()
    } else {
        name.to_string()
    }
}

/// An input that could not be opened or read, with its name.
#[derive(Debug)]
pub struct InputError {
    name: String,
    source: io::Error,
}

impl InputError {
    /// An error reading `name`.
    pub fn new(name: &str, source: io::Error) -> InputError {
        InputError {
            name: name.to_string(),
            source,
        }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reason = match self.source.kind() {
            io::ErrorKind::NotFound => "no such file".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => self.source.to_string(),
        };
        let name = crate::escape::escape_str(&display_name(&self.name));
        write!(f, "cannot read '{name}': {reason}")
    }
}

impl std::error::Error for InputError {}

/// The UTF-8 byte order mark, ignored at the start of an input.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The lines of `bytes` with their 1-based numbers: LF or CRLF endings
/// removed, a last line without a newline kept, a leading BOM ignored.
pub fn lines(bytes: &[u8]) -> Lines<'_> {
    lines_at(bytes, 0)
}

/// The lines of a piece of an input that starts `offset` bytes in: as
/// [`lines`], but a BOM is ignored only at offset 0, where it is one.
pub fn lines_at(bytes: &[u8], offset: usize) -> Lines<'_> {
    let rest = match offset {
        0 => bytes.strip_prefix(BOM).unwrap_or(bytes),
        _ => bytes,
    };
    Lines { rest, number: 0 }
}

/// The iterator of [`lines`].
pub struct Lines<'a> {
    rest: &'a [u8],
    number: u64,
}

impl<'a> Iterator for Lines<'a> {
    type Item = (u64, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest) = match memchr::memchr(b'\n', self.rest) {
            Some(end) => (&self.rest[..end], &self.rest[end + 1..]),
            None => (self.rest, &b""[..]),
        };
        self.rest = rest;
        self.number += 1;
        Some((self.number, strip_cr(line)))
    }
}

/// Removes the CR of a CRLF ending.
pub fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(bytes: &[u8]) -> Vec<(u64, &[u8])> {
        lines(bytes).collect()
    }

    #[test]
    fn endings_bom_and_last_line() {
        assert_eq!(collect(b""), vec![]);
        assert_eq!(collect(b"\n"), vec![(1, &b""[..])]);
        assert_eq!(collect(b"a\r\nb"), vec![(1, &b"a"[..]), (2, &b"b"[..])]);
        assert_eq!(
            collect(b"\xEF\xBB\xBFa\n\nb\n"),
            vec![(1, &b"a"[..]), (2, &b""[..]), (3, &b"b"[..])]
        );
        assert_eq!(collect(b"a\rb\n"), vec![(1, &b"a\rb"[..])]);
    }
}
