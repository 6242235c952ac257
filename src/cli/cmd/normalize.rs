//! `urinorm normalize`: each line's canonical form at a rung, in order.

use clap::Args;
use serde_json::json;
use urinorm::InvalidUri;
use urinorm::normalize::{Normalizer, Rung};
use urinorm::pipeline::{LineMapper, Mode};

use crate::cli::engine::{DefaultRejects, RunArgs, execute};
use crate::cli::{Error, Outcome};

/// The rung flag, shared by `normalize` and `dedup`.
#[derive(Args, Debug)]
pub struct RungArgs {
    /// How far up the RFC 3986 §6.2 ladder to go: string, syntax or scheme.
    #[arg(long, default_value = "scheme", value_name = "RUNG")]
    pub rung: Rung,
}

#[derive(Args, Debug)]
pub struct NormalizeArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// A [`Normalizer`] as the engine's line mapper.
pub struct NormalizeLines(pub Normalizer);

impl LineMapper for NormalizeLines {
    fn map_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<bool, InvalidUri> {
        self.0.normalize_if_changed(line, out)
    }
}

pub fn run(args: &NormalizeArgs) -> Result<Outcome, Error> {
    let mapper = NormalizeLines(Normalizer::new(args.rung.rung));
    let extra = [
        ("command", json!("normalize")),
        ("rung", json!(args.rung.rung.name())),
    ];
    execute(
        &args.run,
        &mapper,
        Mode::Map,
        DefaultRejects::EachOnStderr,
        &extra,
    )
}
