//! Why an input could not be read, in one sentence naming it: it could
//! not be opened or read, its compressed data is damaged (and where), or it
//! is compressed in a format urinorm does not read.
//!
//! It knows names (`-` is standard input) and problems; not how inputs
//! are opened or streamed.

use std::io;

use super::format::Format;

/// The name that means standard input.
pub const STDIN: &str = "-";

/// An input's name as messages show it: standard input as `<stdin>`.
pub(crate) fn display_name(name: &str) -> String {
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
    problem: Problem,
}

/// What went wrong with an input.
#[derive(Debug)]
pub(crate) enum Problem {
    /// Opening or reading it failed.
    Io(io::Error),
    /// Its compressed data stopped decoding at byte `at` of the file: the
    /// bytes its decoder had taken when it failed, which is where the data
    /// ends when it is cut short, and within one buffer of the damage
    /// otherwise (a decoder takes its input a buffer at a time).
    Damaged {
        format: Format,
        at: u64,
        /// It ended before its data did.
        cut_short: bool,
        /// The decoder's words.
        detail: String,
    },
    /// After its last member (frame, stream), `bytes` bytes from byte
    /// `at` that begin no other: ignored (as gzip does), every line before
    /// them read, and said.
    Trailing { format: Format, at: u64, bytes: u64 },
    /// It is compressed in a format urinorm does not read.
    Unsupported {
        format: &'static str,
        command: &'static str,
    },
}

impl InputError {
    /// An error reading `name`.
    pub fn new(name: &str, source: io::Error) -> InputError {
        InputError::with_problem(name, Problem::Io(source))
    }

    pub(crate) fn with_problem(name: &str, problem: Problem) -> InputError {
        InputError {
            name: name.to_string(),
            problem,
        }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = crate::escape::escape_str(&display_name(&self.name));
        match &self.problem {
            Problem::Io(source) => {
                let reason = match source.kind() {
                    io::ErrorKind::NotFound => "no such file".to_string(),
                    _ => crate::sys::os_error::Reason(source).to_string(),
                };
                write!(f, "cannot read '{name}': {reason}")?;
                // A URI given where a file is read: say how to give one.
                let uri_like = self.name.contains("://") || self.name.starts_with("urn:");
                if uri_like && source.kind() == io::ErrorKind::NotFound {
                    f.write_str(
                        " (the arguments are files of URIs: give a URI on standard input, `echo URI | urinorm ...`, or see each rung's work with `urinorm explain URI`)",
                    )?;
                }
                Ok(())
            }
            Problem::Damaged {
                format,
                at,
                cut_short,
                detail,
            } => {
                let format = format.name();
                let detail = crate::escape::escape_str(detail);
                match cut_short {
                    true => write!(
                        f,
                        "'{name}' is damaged: its {format} data is cut short at byte {at} ({detail})"
                    ),
                    false => write!(
                        f,
                        "'{name}' is damaged: its {format} data stops decoding near byte {at} ({detail})"
                    ),
                }
            }
            Problem::Trailing { format, at, bytes } => {
                let format = format.name();
                write!(
                    f,
                    "'{name}' has {bytes} bytes after its last {format} member, from byte {at}, that are not {format} data: every line before them was read, the bytes were ignored"
                )
            }
            Problem::Unsupported { format, command } => write!(
                f,
                "'{name}' is {format}-compressed, which urinorm does not read: decompress it first ({command} FILE | urinorm ...)"
            ),
        }
    }
}

impl std::error::Error for InputError {}
