//! `urinorm completions SHELL` and `urinorm man`: the command line described
//! for a shell's completion and for `man`, generated from the same clap
//! definition that parses it, so they never drift from the flags.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use urinorm::escape::escape_str;
use urinorm::pipeline::output::Output;

use crate::cli::{Cli, Error, Outcome, print_line};

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

#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to write (`seen add`); none: urinorm(1).
    #[arg(value_name = "SUBCOMMAND")]
    pub command: Vec<String>,
    /// Write every page (urinorm.1, urinorm-dedup.1, urinorm-seen-add.1,
    /// …) into this directory instead, each replaced whole.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// Writes one manual page (roff) to standard output, or every page into a
/// directory.
pub fn man(args: &ManArgs) -> Result<Outcome, Error> {
    let mut root = Cli::command().disable_help_subcommand(true);
    // Built, the subcommands know their full names (`urinorm-seen-add`).
    root.build();
    if let Some(dir) = &args.dir {
        let mut written = 0;
        write_pages(&root, dir, &mut written)?;
        print_line(&format!(
            "{written} manual pages written to '{}'",
            escape_str(&dir.display().to_string())
        ))?;
        return Ok(Outcome::default());
    }
    let mut command = &root;
    for name in &args.command {
        command = command.find_subcommand(name).ok_or_else(|| {
            Error::Usage(format!(
                "urinorm man: no subcommand '{}' (urinorm --help lists them)",
                escape_str(name)
            ))
        })?;
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(Error::stdout)?;
    write_out(&page)
}

/// Writes `command`'s page and its subcommands' into `dir`, each through a
/// temporary file put in place when complete.
fn write_pages(command: &clap::Command, dir: &Path, written: &mut usize) -> Result<(), Error> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let path = dir.join(man.get_filename());
    let failed = |source| Error::Output {
        name: path.display().to_string(),
        source,
    };
    let mut output = Output::create(Some(&path), None).map_err(failed)?;
    man.render(output.writer()).map_err(failed)?;
    output.finish().map_err(failed)?;
    *written += 1;
    Ok(())
}

fn write_out(bytes: &[u8]) -> Result<Outcome, Error> {
    io::stdout()
        .lock()
        .write_all(bytes)
        .map_err(Error::stdout)?;
    Ok(Outcome::default())
}
