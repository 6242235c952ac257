//! `urinorm normalize`: each line's canonical form at a rung, in order.

use clap::Args;
use serde_json::json;
use urinorm::normalize::protocol::{PRESETS, Preset, Protocol, Transform};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::pipeline::input::InputError;
use urinorm::pipeline::{LineMapper, Mode};
use urinorm::surt::write_surt;
use urinorm::{InvalidUri, UriRef};

use crate::cli::engine::{DefaultRejects, RunArgs, execute};
use crate::cli::{Error, Outcome};

/// The rung and transform flags, shared by every command that normalizes.
#[derive(Args, Debug, Default, Clone)]
pub struct RungArgs {
    /// How far up the RFC 3986 §6.2 ladder to go: string, syntax, scheme
    /// (the default) or protocol (the default with --preset or --with).
    #[arg(long, value_name = "RUNG")]
    pub rung: Option<Rung>,
    /// Protocol-rung transforms by preset name: safe or aggressive (default safe).
    #[arg(long, value_name = "PRESET")]
    pub preset: Option<Preset>,
    /// Add one protocol-rung transform (repeatable; see `urinorm transforms`).
    #[arg(long = "with", value_name = "TRANSFORM")]
    pub with: Vec<Transform>,
    /// Remove one protocol-rung transform (repeatable).
    #[arg(long = "without", value_name = "TRANSFORM")]
    pub without: Vec<Transform>,
    /// Tracking parameter names for drop-tracking-params, one per line
    /// (`prefix*` for a prefix), replacing the built-in list.
    #[arg(long, value_name = "FILE")]
    pub tracking_params: Option<std::path::PathBuf>,
}

impl RungArgs {
    /// Whether any protocol-rung flag was given.
    fn wants_protocol(&self) -> bool {
        self.preset.is_some()
            || !self.with.is_empty()
            || !self.without.is_empty()
            || self.tracking_params.is_some()
    }

    /// The rung the flags ask for.
    pub fn rung(&self) -> Rung {
        self.rung.unwrap_or(if self.wants_protocol() {
            Rung::Protocol
        } else {
            Rung::Scheme
        })
    }

    /// The normalizer the flags describe.
    pub fn normalizer(&self) -> Result<Normalizer, Error> {
        let rung = self.rung();
        if rung != Rung::Protocol {
            if self.wants_protocol() {
                return Err(Error::Usage(format!(
                    "--preset, --with, --without and --tracking-params need the protocol rung, not --rung {rung}"
                )));
            }
            return Ok(Normalizer::new(rung));
        }
        let mut protocol = Protocol::from(self.preset.unwrap_or(PRESETS[0]));
        self.with.iter().for_each(|&t| protocol.add(t));
        self.without.iter().for_each(|&t| protocol.remove(t));
        if let Some(path) = &self.tracking_params {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::Input(InputError::new(&path.display().to_string(), e)))?;
            protocol.set_tracking_list(&text);
        }
        Ok(Normalizer::with_protocol(protocol))
    }
}

/// What a line's key is: its canonical form, or that form as a SURT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum KeyFormat {
    #[default]
    Canonical,
    /// `com,example,www)/path?query`, for web archive (CDX) tooling.
    Surt,
}

#[derive(Args, Debug)]
pub struct NormalizeArgs {
    #[command(flatten)]
    pub rung: RungArgs,
    /// The key written for each line.
    #[arg(long, value_enum, default_value_t = KeyFormat::Canonical)]
    pub key: KeyFormat,
    #[command(flatten)]
    pub run: RunArgs,
}

/// A [`Normalizer`] as the engine's line mapper, writing canonical or SURT keys.
pub struct NormalizeLines {
    pub normalizer: Normalizer,
    pub key: KeyFormat,
}

impl LineMapper for NormalizeLines {
    fn map_line(&self, line: &[u8], out: &mut Vec<u8>) -> Result<bool, InvalidUri> {
        if self.key == KeyFormat::Canonical {
            return self.normalizer.normalize_if_changed(line, out);
        }
        CANONICAL.with_borrow_mut(|canonical| {
            canonical.clear();
            self.normalizer.normalize_into(line, canonical)?;
            let uri = UriRef::parse_bytes(canonical).expect("canonical forms are valid references");
            write_surt(&uri, out);
            Ok(true)
        })
    }
}

thread_local! {
    /// The canonical form a SURT key is made from: reused, not allocated per line.
    static CANONICAL: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub fn run(args: &NormalizeArgs) -> Result<Outcome, Error> {
    let mapper = NormalizeLines {
        normalizer: args.rung.normalizer()?,
        key: args.key,
    };
    let extra = [
        ("command", json!("normalize")),
        ("rung", json!(args.rung.rung().name())),
    ];
    execute(
        &args.run,
        &mapper,
        Mode::Map,
        DefaultRejects::EachOnStderr,
        &extra,
    )
}
