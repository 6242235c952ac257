//! The `urinorm` binary: parse the command line, run, turn the result into an exit code.

use std::process::ExitCode;

use clap::Parser;

mod cli;

use cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli::run(cli) {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        // `urinorm … | head`: the reader has all it wanted.
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("urinorm: {e}");
            ExitCode::from(2)
        }
    }
}
