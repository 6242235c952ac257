//! The `urinorm` binary: parse the command line, run, turn the result into an exit code.

use std::process::ExitCode;

use clap::Parser;

mod cli;

use cli::Cli;

fn main() -> ExitCode {
    urinorm::sys::memory::keep_large_blocks_mapped();
    // A panic is a bug: one sentence, no backtrace. The engine turns one in a
    // worker into that line's rejection, so the run still accounts for it.
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("urinorm: internal error{location} (a bug: please report it)");
    }));
    // Ctrl-C (or a TERM or HUP signal) removes the temporary files first:
    // the spill's partitions and the unfinished `-o` file. A run that
    // defers it (a live seen store) ends its input there and commits first.
    let _ = ctrlc::set_handler(|| {
        if urinorm::sys::cleanup::interrupt() {
            return;
        }
        // Held until the exit: no temporary path is made after this.
        let _closed = urinorm::sys::cleanup::remove_all();
        eprintln!("urinorm: interrupted; temporary files removed");
        std::process::exit(130);
    });
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
