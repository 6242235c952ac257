//! Where results go: standard output or a file that appears only when the
//! run completes (written to a temporary file beside it, synced, then
//! renamed), and the trait that rejected lines are reported through.
//!
//! It knows files and bytes, not lines or what they mean.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use crate::error::InvalidUri;

/// Output buffers are large: one write per few thousand lines, not per line.
const BUFFER_BYTES: usize = 1 << 20;

/// The run's main output.
pub enum Output {
    Stdout(BufWriter<io::Stdout>),
    /// A temporary file in the target's directory, renamed over it by [`Output::finish`].
    File {
        writer: BufWriter<NamedTempFile>,
        path: PathBuf,
        /// Removed by the signal handler if the run is interrupted.
        registered: crate::cleanup::Registered,
    },
    /// A path that is not a regular file (a device, a pipe): written in place.
    Special(BufWriter<File>),
}

impl Output {
    /// Standard output, or a file at `path` that exists only once complete.
    pub fn create(path: Option<&Path>) -> io::Result<Output> {
        let Some(path) = path else {
            return Ok(Output::Stdout(BufWriter::with_capacity(
                BUFFER_BYTES,
                io::stdout(),
            )));
        };
        match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() => {
                let file = std::fs::OpenOptions::new().write(true).open(path)?;
                Ok(Output::Special(BufWriter::with_capacity(
                    BUFFER_BYTES,
                    file,
                )))
            }
            // Replace the file a symbolic link points to, not the link.
            Ok(_) => Output::create_file(&std::fs::canonicalize(path)?),
            Err(_) => Output::create_file(path),
        }
    }

    /// A temporary file beside `path`, to be renamed over it when complete.
    /// It gets the mode (and, where the process may, the owner) of the file
    /// it replaces, as `sort -o` and `sed -i` do; a new file gets mode 0666
    /// less the umask, as any file a command creates.
    fn create_file(path: &Path) -> io::Result<Output> {
        let dir = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        // A temporary file is private by default: ask for the usual mode.
        let mut builder = tempfile::Builder::new();
        builder.prefix(".urinorm-");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let temp = builder.tempfile_in(dir).map_err(in_directory)?;
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
        Ok(Output::File {
            registered: crate::cleanup::register(temp.path()),
            writer: BufWriter::with_capacity(BUFFER_BYTES, temp),
            path: path.to_path_buf(),
        })
    }

    /// Checks that files can be made in `dir` (by making and removing a
    /// directory there), so that a run never learns it halfway through.
    pub fn check_dir(dir: &Path) -> io::Result<()> {
        let probe = tempfile::Builder::new()
            .prefix(".urinorm-probe-")
            .tempdir_in(dir);
        probe.map(drop).map_err(in_directory)
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
    /// file (for [`Sinks::out_file`](super::Sinks::out_file)).
    pub fn file(&self) -> io::Result<Option<File>> {
        match self {
            Output::File { writer, .. } => writer.get_ref().as_file().try_clone().map(Some),
            _ => Ok(None),
        }
    }

    /// Flushes, and for a file syncs it and puts it in place.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Output::Stdout(mut w) => w.flush(),
            Output::Special(mut w) => w.flush(),
            Output::File {
                writer,
                path,
                registered,
            } => {
                let temp = writer.into_inner().map_err(|e| e.into_error())?;
                temp.as_file().sync_all()?;
                temp.persist(&path).map_err(|e| e.error)?;
                drop(registered);
                Ok(())
            }
        }
    }
}

/// An error making a temporary file in a directory, without the temporary
/// file's name (which tempfile puts in its errors): the user named another
/// path, which the caller's message gives.
fn in_directory(e: io::Error) -> io::Error {
    match e.kind() {
        io::ErrorKind::NotFound => io::Error::new(e.kind(), "no such directory"),
        io::ErrorKind::PermissionDenied => io::Error::new(e.kind(), "permission denied"),
        kind => io::Error::from(kind),
    }
}

/// Where the report of each rejected line goes.
pub trait RejectSink {
    /// One rejected line: its input, 1-based line number, why, and its bytes.
    fn reject(&mut self, input: &str, line: u64, error: &InvalidUri, raw: &[u8]) -> io::Result<()>;

    /// Called once at the end of the run.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
