//! Where the command line reports rejected lines: each on standard error,
//! each in a `--rejects` file, or the first few kept for the summary. The
//! words are the command line's: a rejection that a repair would avoid
//! names the `--lenient` flag.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use urinorm::escape::{escape, escape_str};
use urinorm::pipeline::Rejection;
use urinorm::pipeline::output::{Output, RejectSink};

/// A rejection as the command line words it: the reason, where, and the
/// flag that would avoid it.
pub struct Reason<'e>(pub &'e Rejection);

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        match self.0.repair() {
            Some(repair) => write!(f, " (--lenient would {})", repair.hint()),
            None => Ok(()),
        }
    }
}

/// Every rejected line as `file:line: reason` on standard error.
pub struct RejectsToStderr;

impl RejectSink for RejectsToStderr {
    fn reject(&mut self, input: &str, line: u64, error: &Rejection, _raw: &[u8]) -> io::Result<()> {
        let input = escape_str(input);
        writeln!(io::stderr().lock(), "{input}:{line}: {}", Reason(error))
    }
}

/// Every rejected line as `file:line<TAB>reason<TAB>raw` in a file: the
/// raw line as it was read, byte for byte, so nothing is lost (the file is
/// data, not a diagnostic: it is never escaped). Like `-o`, the file
/// appears only when the run completes.
pub struct RejectsToFile {
    output: Option<Output>,
}

impl RejectsToFile {
    pub fn create(path: &Path) -> io::Result<RejectsToFile> {
        Ok(RejectsToFile {
            output: Some(Output::create(Some(path), None)?),
        })
    }

    fn writer(&mut self) -> io::Result<&mut dyn Write> {
        match &mut self.output {
            Some(output) => Ok(output.writer()),
            None => Err(io::Error::other("the rejects file is already complete")),
        }
    }
}

impl RejectSink for RejectsToFile {
    fn reject(&mut self, input: &str, line: u64, error: &Rejection, raw: &[u8]) -> io::Result<()> {
        let writer = self.writer()?;
        write!(writer, "{input}:{line}\t{}\t", Reason(error))?;
        writer.write_all(raw)?;
        writer.write_all(b"\n")
    }

    fn finish(&mut self) -> io::Result<()> {
        self.output.take().map_or(Ok(()), Output::finish)
    }
}

/// The first few rejected lines, kept to show in the summary.
#[derive(Default)]
pub struct RejectExamples {
    pub examples: Vec<String>,
}

/// How many examples of rejected lines the summary shows.
pub const EXAMPLES: usize = 5;

/// How much of a rejected line the summary shows, in characters.
const SHOWN_OF_A_LINE: usize = 120;

impl RejectSink for RejectExamples {
    fn reject(&mut self, input: &str, line: u64, error: &Rejection, raw: &[u8]) -> io::Result<()> {
        if self.examples.len() < EXAMPLES {
            let (input, raw) = (escape_str(input), escape(raw, SHOWN_OF_A_LINE));
            self.examples
                .push(format!("{input}:{line}: {}: {raw}", Reason(error)));
        }
        Ok(())
    }
}
