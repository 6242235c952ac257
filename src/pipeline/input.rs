//! Inputs: plain files memory-mapped when they are regular files and the
//! caller allows it ([`MmapChoice`]), read whole otherwise; standard input,
//! pipes and compressed files left to be read as streams ([`super::stream`]);
//! and splitting bytes into lines.
//!
//! It knows files and lines, nothing of what a line holds.

use std::fs::File;
use std::io::{self, Read, Seek};
use std::path::Path;

use memmap2::Mmap;

use super::format::{self, MAGIC_BYTES, Sniffed};
pub use super::input_error::{InputError, STDIN};
use super::input_error::{Problem, display_name};
use super::stream::{self, Blocks, Delivery};

/// One input, opened: its name for messages and its bytes.
pub struct Input {
    name: String,
    data: Data,
}

enum Data {
    Mapped(Mmap),
    Owned(Vec<u8>),
    /// Read as a stream, on a thread of its own (see [`super::stream`]).
    Stream(Streamed),
}

/// Where a streamed input comes from.
enum Streamed {
    Stdin,
    /// A compressed file (with its size), or a pipe or device (without).
    File(File, Option<u64>),
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
    /// Opens `name` (`-` is standard input). A regular file is mapped when
    /// `mmap` allows it and read whole otherwise, unless its first bytes
    /// say it is compressed; then it is a stream, as standard input, pipes
    /// and devices are.
    pub fn open(name: &str, mmap: MmapChoice) -> Result<Input, InputError> {
        let fail = |source| InputError::new(name, source);
        let data = if name == STDIN {
            Data::Stream(Streamed::Stdin)
        } else {
            let mut file = File::open(Path::new(name)).map_err(fail)?;
            let meta = file.metadata().map_err(fail)?;
            if meta.is_dir() {
                return Err(fail(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                )));
            }
            if !meta.is_file() {
                // A pipe or a device: read as it comes, its format told then.
                Data::Stream(Streamed::File(file, None))
            } else if compressed(name, &mut file)? {
                Data::Stream(Streamed::File(file, Some(meta.len())))
            } else if mmap.allowed && meta.len() > 0 {
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
                // Empty files cannot be mapped, and the caller may not allow it.
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes).map_err(fail)?;
                Data::Owned(bytes)
            }
        };
        Ok(Input {
            name: display_name(name),
            data,
        })
    }

    /// Opens `name` (`-` is standard input) as a WARC file, compressed or
    /// not, and reads it whole into the crawl index its records make
    /// ([`super::warc`]): CDXJ lines, one a capture (line N of the input is
    /// the N-th record indexed). The error names the file and why it is no
    /// WARC file, or which record could not be read.
    pub fn open_warc(name: &str) -> Result<Input, InputError> {
        let source: stream::Source = match name {
            STDIN => Box::new(io::stdin()),
            path => Box::new(File::open(Path::new(path)).map_err(|e| InputError::new(name, e))?),
        };
        let reader = stream::decoded(source).map_err(|p| InputError::with_problem(name, p))?;
        let lines = super::warc::index_lines(io::BufReader::new(reader))
            .map_err(|why| InputError::new(name, io::Error::other(why)))?;
        Ok(Input {
            name: display_name(name),
            data: Data::Owned(lines),
        })
    }

    /// The input's name as messages show it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All of the input's bytes, or `None` for an input read as a stream.
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Mapped(map) => Some(map),
            Data::Owned(bytes) => Some(bytes),
            Data::Stream(_) => None,
        }
    }

    /// The input's size in its own bytes (a compressed file's compressed
    /// bytes), as the progress bar counts them; `None` when unknown.
    pub fn size(&self) -> Option<u64> {
        match &self.data {
            Data::Stream(Streamed::Stdin) => None,
            Data::Stream(Streamed::File(_, size)) => *size,
            _ => self.bytes().map(|b| b.len() as u64),
        }
    }

    /// Starts reading a streamed input on a thread of its own; `None` for
    /// an input whose bytes are all there.
    pub(crate) fn stream(&self, delivery: Delivery) -> Option<Result<Blocks, InputError>> {
        let Data::Stream(streamed) = &self.data else {
            return None;
        };
        let source: stream::Source = match streamed {
            Streamed::Stdin => Box::new(io::stdin()),
            // A compressed file is read from its start each time (the input
            // may be run more than once); a pipe, as it comes.
            Streamed::File(file, size) => match FromStart::new(file, size.is_some()) {
                Ok(from_start) => Box::new(from_start),
                Err(e) => return Some(Err(InputError::new(&self.name, e))),
            },
        };
        Some(Ok(stream::spawn(self.name.clone(), source, delivery)))
    }
}

/// A file read from its start whatever else read its handle before:
/// positional reads, which leave the handle's offset alone.
struct FromStart {
    file: File,
    /// Where the next read starts, when reading by position.
    at: Option<u64>,
}

impl FromStart {
    /// Reads `file` (its own handle) from the start when `seekable`, else on
    /// from where it is (a pipe has no start to go back to).
    fn new(file: &File, seekable: bool) -> io::Result<FromStart> {
        let mut file = file.try_clone()?;
        let at = match (seekable, cfg!(unix)) {
            (true, true) => Some(0),
            (true, false) => {
                // A cloned handle shares its offset: one reader at a time.
                file.rewind()?;
                None
            }
            (false, _) => None,
        };
        Ok(FromStart { file, at })
    }
}

impl Read for FromStart {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.at {
            #[cfg(unix)]
            Some(at) => {
                let read = std::os::unix::fs::FileExt::read_at(&self.file, buf, *at)?;
                *at += read as u64;
                Ok(read)
            }
            _ => self.file.read(buf),
        }
    }
}

/// The inputs' total size in bytes of lines, when every input is a plain
/// file (a stream's is not known until it is read).
pub fn total_bytes(inputs: &[Input]) -> Option<u64> {
    inputs
        .iter()
        .map(|i| i.bytes().map(|b| b.len() as u64))
        .sum()
}

/// The inputs' total size in their own bytes ([`Input::size`]), when known.
pub fn total_size(inputs: &[Input]) -> Option<u64> {
    inputs.iter().map(Input::size).sum()
}

/// Whether the regular file `file` (named `name`) is compressed, by its
/// first bytes; it is left at its start. A compressed format urinorm does
/// not read is an error.
fn compressed(name: &str, file: &mut File) -> Result<bool, InputError> {
    let fail = |source| InputError::new(name, source);
    let mut prefix = Vec::with_capacity(MAGIC_BYTES);
    (&mut *file)
        .take(MAGIC_BYTES as u64)
        .read_to_end(&mut prefix)
        .map_err(fail)?;
    file.rewind().map_err(fail)?;
    match format::sniff(&prefix, true) {
        Sniffed::Compressed(_) => Ok(true),
        Sniffed::Unsupported(format, command) => Err(InputError::with_problem(
            name,
            Problem::Unsupported { format, command },
        )),
        Sniffed::Plain | Sniffed::NeedMore => Ok(false),
    }
}

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

    /// A compressed input run twice (as the fuzz target and a library
    /// caller may) reads from its start both times.
    #[test]
    fn a_compressed_file_streams_whole_every_time() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("urls");
        let text = b"http://a/\nhttp://b/\n".repeat(1000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        // SAFETY: the file is this test's own.
        let input = Input::open(path.to_str().unwrap(), unsafe { MmapChoice::auto() }).unwrap();
        assert!(input.bytes().is_none(), "compressed files are streamed");
        for _ in 0..2 {
            let blocks = input.stream(Delivery::Chunks(4096)).unwrap().unwrap();
            let read: Vec<u8> = blocks.iter().flat_map(|b| b.unwrap().bytes).collect();
            assert!(read == text);
        }
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
