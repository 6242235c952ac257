//! `urinorm dedup`: each equivalence class once, in first-occurrence order.

use clap::Args;
use serde_json::json;
use urinorm::pipeline::{Emit, Mode};

use super::normalize::{ColumnArgs, RungArgs};
use crate::cli::engine::{DefaultRejects, MemoryArgs, RunArgs, execute};
use crate::cli::{Error, Outcome};

#[derive(Args, Debug)]
pub struct DedupArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// What to write for each class: its canonical form, its first original
    /// line (what a crawler frontier fetches), or `N<TAB>canonical`.
    #[arg(long, value_enum, default_value_t = Emit::Canonical)]
    pub emit: Emit,
    #[command(flatten)]
    pub memory: MemoryArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: &DedupArgs) -> Result<Outcome, Error> {
    let mapper = args.columns.mapper(args.rung.normalizer()?)?;
    let extra = [
        ("command", json!("dedup")),
        ("rung", json!(args.rung.rung().name())),
        ("emit", json!(args.emit.name())),
    ];
    execute(
        &args.run,
        Some(&args.memory),
        &mapper,
        Mode::Dedup(args.emit),
        false,
        DefaultRejects::Summarized,
        &extra,
    )
}
