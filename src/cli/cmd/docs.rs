//! `urinorm completions SHELL` and `urinorm man`: the command line described
//! for a shell's completion and for `man`, generated from the same clap
//! definition that parses it, so they never drift from the flags.

use std::io::{self, Write};

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use crate::cli::{Cli, Error, Outcome};

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Writes the completion script for `args.shell` to standard output.
pub fn completions(args: &CompletionsArgs) -> Result<Outcome, Error> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "urinorm", &mut script);
    write_out(&script)
}

/// Writes the manual page (roff) to standard output.
pub fn man() -> Result<Outcome, Error> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(Error::stdout)?;
    write_out(&page)
}

fn write_out(bytes: &[u8]) -> Result<Outcome, Error> {
    io::stdout()
        .lock()
        .write_all(bytes)
        .map_err(Error::stdout)?;
    Ok(Outcome::default())
}
