//! Where results go: standard output or a file that appears only when the
//! run completes (written to a temporary file beside it, synced, then
//! renamed), compressed when asked; and the trait that rejected lines are
//! reported through.
//!
//! It knows files and bytes, not lines or what they mean.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::TempPath;

use super::Rejection;
use super::compress::{Compression, ParallelEncoder};
use super::stream::Format;
use crate::sys::os_error::{Reason, kind_words};

/// Output buffers are large: one write per few thousand lines, not per line.
const BUFFER_BYTES: usize = 1 << 20;

/// How many bytes of a file written to be synced at the end go to the
/// disk at a time while it is written.
const WRITEBACK_BYTES: u64 = 8 << 20;

/// A file that is to be synced when complete, its bytes handed to the
/// system's writeback as they accumulate (Linux's `sync_file_range`, which
/// starts the disk writes and does not wait for them). The `fsync` that
/// makes the file durable then waits for the last few megabytes, not for
/// the whole file at the end of the run with every core idle. Elsewhere a
/// plain file.
pub struct WrittenBack {
    file: File,
    written: u64,
    /// Where the bytes not yet handed to writeback start.
    pending: u64,
}

impl WrittenBack {
    fn new(file: File) -> WrittenBack {
        WrittenBack {
            file,
            written: 0,
            pending: 0,
        }
    }

    /// Hands the bytes written since the last call to writeback.
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let len = self.written - self.pending;
            // SAFETY: sync_file_range reads no memory of ours; it acts on
            // the open file's pages in the range given. Its error is not
            // kept: the fsync at the end reports any the writes met.
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    self.pending as libc::off64_t,
                    len as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
        }
        self.pending = self.written;
    }

    /// The file, to sync.
    fn into_file(self) -> File {
        self.file
    }
}

impl Write for WrittenBack {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.pending >= WRITEBACK_BYTES {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// The run's main output.
pub enum Output {
    Stdout(Encoded<io::Stdout>),
    /// A temporary file in the target's directory, renamed over it by
    /// [`Output::finish`]. Written through the plain `File`, so that a
    /// write error names no temporary path (the user named `path`).
    File {
        writer: Encoded<WrittenBack>,
        temp: TempPath,
        path: PathBuf,
        /// Removed by the signal handler if the run is interrupted.
        registered: crate::sys::cleanup::Registered,
    },
    /// A path that is not a regular file (a device, a pipe): written in place.
    Special(Encoded<File>),
}

/// A writer, buffered, its bytes compressed when asked.
pub type Encoded<W> = BufWriter<Encoder<W>>;

fn encoded<W: Write>(inner: W, compression: Option<Compression>) -> io::Result<Encoded<W>> {
    let encoder = match compression {
        None => Encoder::Plain(inner),
        Some(compression) => Encoder::Compressed(ParallelEncoder::new(inner, compression)?),
    };
    Ok(BufWriter::with_capacity(BUFFER_BYTES, encoder))
}

/// Writes to `W` as they are, or compressed.
pub enum Encoder<W: Write> {
    Plain(W),
    Compressed(ParallelEncoder<W>),
}

impl<W: Write> Encoder<W> {
    /// Ends the compressed stream; returns the writer under it.
    fn finish(self) -> io::Result<W> {
        match self {
            Encoder::Plain(w) => Ok(w),
            Encoder::Compressed(e) => e.finish(),
        }
    }

    fn as_dyn(&mut self) -> &mut dyn Write {
        match self {
            Encoder::Plain(w) => w,
            Encoder::Compressed(e) => e,
        }
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.as_dyn().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.as_dyn().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.as_dyn().flush()
    }
}

/// The compression a file's name asks for: `.gz`, `.zst` or `.bz2`, in
/// any case; the name of a format urinorm does not write (`.xz`, `.lz4`,
/// …) is an error naming it, never plain text under that name.
///
/// ```
/// use std::path::Path;
/// use urinorm::pipeline::output::compression_named;
/// use urinorm::pipeline::Format;
/// assert_eq!(compression_named(Path::new("urls.txt.gz")), Ok(Some(Format::Gzip)));
/// assert_eq!(compression_named(Path::new("URLS.TXT.GZ")), Ok(Some(Format::Gzip)));
/// assert_eq!(compression_named(Path::new("urls.txt")), Ok(None));
/// assert_eq!(compression_named(Path::new("urls.xz")), Err("xz"));
/// ```
pub fn compression_named(path: &Path) -> Result<Option<Format>, &'static str> {
    let Some(extension) = path.extension().and_then(|e| e.to_str()) else {
        return Ok(None);
    };
    match extension.to_ascii_lowercase().as_str() {
        "gz" => Ok(Some(Format::Gzip)),
        "zst" => Ok(Some(Format::Zstd)),
        "bz2" => Ok(Some(Format::Bzip2)),
        other => match UNWRITTEN.iter().find(|&&name| name == other) {
            Some(name) => Err(name),
            None => Ok(None),
        },
    }
}

/// Compressed formats urinorm does not write, by the extension that names
/// them.
const UNWRITTEN: [&str; 9] = ["xz", "lz4", "lzma", "lz", "br", "z", "zip", "7z", "tgz"];

/// Flushes a finished encoder and what is under it.
fn finish_encoded<W: Write>(writer: Encoded<W>) -> io::Result<W> {
    let mut inner = writer.into_inner().map_err(|e| e.into_error())?.finish()?;
    inner.flush()?;
    Ok(inner)
}

impl Output {
    /// Standard output, or a file at `path` that exists only once complete;
    /// compressed in `compression`'s format when it is one.
    pub fn create(path: Option<&Path>, compression: Option<Compression>) -> io::Result<Output> {
        let Some(path) = path else {
            return Ok(Output::Stdout(encoded(io::stdout(), compression)?));
        };
        match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                let file = std::fs::OpenOptions::new().write(true).open(path)?;
                Ok(Output::Special(encoded(file, compression)?))
            }
            // Replace the file a symbolic link points to, not the link,
            // and only one the user may write, as `sort -o` (which opens
            // it for writing) would: the rename alone needs only the
            // directory's permission.
            Ok(_) => {
                std::fs::OpenOptions::new().write(true).open(path)?;
                Output::create_file(&std::fs::canonicalize(path)?, compression)
            }
            Err(_) => Output::create_file(path, compression),
        }
    }

    /// A temporary file beside `path`, to be renamed over it when complete.
    /// It gets the mode (and, where the process may, the owner) of the file
    /// it replaces, as `sort -o` and `sed -i` do; a new file gets mode 0666
    /// less the umask, as any file a command creates.
    fn create_file(path: &Path, compression: Option<Compression>) -> io::Result<Output> {
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        // A temporary file is private by default: ask for the usual mode.
        let mut builder = tempfile::Builder::new();
        let prefix = crate::sys::cleanup::Temporary::Output.prefix();
        builder.prefix(&prefix);
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let (temp, registered) =
            crate::sys::cleanup::create(|| builder.tempfile_in(dir), |temp| temp.path())
                .map_err(|e| in_directory(dir, e))?;
        // Held as long as the file is open: a sweep leaves it alone.
        let _ = temp.as_file().try_lock();
        if let Ok(replaced) = std::fs::metadata(path) {
            temp.as_file().set_permissions(replaced.permissions())?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                // Only a privileged process may give a file away: otherwise
                // the file is the user's own, as a new file would be.
                let _ = std::os::unix::fs::fchown(
                    temp.as_file(),
                    Some(replaced.uid()),
                    Some(replaced.gid()),
                );
            }
        }
        let (file, temp) = temp.into_parts();
        Ok(Output::File {
            registered,
            writer: encoded(WrittenBack::new(file), compression)?,
            temp,
            path: path.to_path_buf(),
        })
    }

    /// Checks that files can be made in `dir` (by making and removing a
    /// directory there), so that a run never learns it halfway through.
    pub fn check_dir(dir: &Path) -> io::Result<()> {
        let probe = crate::sys::cleanup::create(
            || {
                tempfile::Builder::new()
                    .prefix(&crate::sys::cleanup::Temporary::Probe.prefix())
                    .tempdir_in(dir)
            },
            |probe| probe.path(),
        );
        probe.map(drop).map_err(|e| in_directory(dir, e))
    }

    /// The writer to write lines to.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(w) => w,
            Output::File { writer, .. } => writer,
            Output::Special(w) => w,
        }
    }

    /// Another handle on the file being written, when it is a temporary
    /// file written as it is (for [`Sinks::out_file`](super::Sinks::out_file)).
    pub fn file(&self) -> io::Result<Option<File>> {
        match self {
            Output::File { writer, .. } => match writer.get_ref() {
                Encoder::Plain(file) => file.file.try_clone().map(Some),
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// Flushes (ending a compressed stream), and for a file syncs it and
    /// puts it in place.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Output::Stdout(w) => finish_encoded(w).map(drop),
            Output::Special(w) => finish_encoded(w).map(drop),
            Output::File {
                writer,
                temp,
                path,
                registered,
            } => {
                finish_encoded(writer)?.into_file().sync_all()?;
                temp.persist(&path).map_err(|e| e.error)?;
                drop(registered);
                Ok(())
            }
        }
    }
}

/// An error making a temporary file in `dir`, without the temporary
/// file's name (which tempfile puts in its errors): the user named another
/// path, which the caller's message gives.
fn in_directory(dir: &Path, e: io::Error) -> io::Error {
    let kind = e.kind();
    if kind == io::ErrorKind::NotFound && !dir.is_dir() {
        return io::Error::new(kind, "no such directory");
    }
    // The system's own error is wrapped out of reach: its kind tells.
    let system = match e.raw_os_error() {
        Some(_) => Reason(&e).to_string(),
        None => kind_words(kind),
    };
    let dir = crate::escape::escape_str(&dir.display().to_string());
    io::Error::new(kind, format!("no file can be made in '{dir}' ({system})"))
}

/// Where the report of each rejected line goes.
pub trait RejectSink {
    /// One rejected line: its input, 1-based line number, why, and its bytes.
    fn reject(&mut self, input: &str, line: u64, error: &Rejection, raw: &[u8]) -> io::Result<()>;

    /// Called once at the end of the run.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_back_as_it_goes_holds_every_byte_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let mut file = WrittenBack::new(File::create(&path).unwrap());
        // Pieces of 3 MiB: writeback is started after the 3rd, 6th and 9th
        // (each time 8 MiB or more are pending), not for the tail.
        let piece: Vec<u8> = (0..=255u8).cycle().take(3 << 20).collect();
        for _ in 0..9 {
            file.write_all(&piece).unwrap();
        }
        file.write_all(b"tail").unwrap();
        assert_eq!(file.pending, 9 * piece.len() as u64);
        assert_eq!(file.written, file.pending + 4);
        file.into_file().sync_all().unwrap();
        let written = std::fs::read(&path).unwrap();
        assert_eq!(written.len(), 9 * piece.len() + 4);
        assert!(written.chunks(piece.len()).take(9).all(|c| c == piece));
        assert!(written.ends_with(b"tail"));
    }
}
