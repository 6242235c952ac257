//! `urinorm normalize`: each line's canonical form at a rung, in order.

use clap::Args;
use serde_json::json;
use urinorm::pipeline::Mode;

use crate::cli::args::{ColumnArgs, Feeds, RungArgs};
use crate::cli::engine::{Job, RunArgs, execute};
use crate::cli::{Error, Outcome};

#[derive(Args, Debug)]
pub struct NormalizeArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// Write exactly one line per input line, in order (for `paste`): an
    /// empty one for a blank or rejected line.
    #[arg(long)]
    pub aligned: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: &NormalizeArgs) -> Result<Outcome, Error> {
    let mapper = args.columns.mapper(&args.rung, Feeds::Output)?;
    let extra = [
        ("command", json!("normalize")),
        ("rung", json!(args.rung.rung().name())),
    ];
    let job = Job {
        aligned: args.aligned,
        line_buffered: args.run.line_buffered,
        ..Job::new(&mapper, Mode::Map, &extra)
    };
    execute(
        &args.run.read,
        args.run.output_path(),
        args.run.compression()?,
        job,
    )
}
