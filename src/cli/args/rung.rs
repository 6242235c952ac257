//! The rung and transform flags and the site rules files, shared by every
//! command that normalizes: each flag mapped onto the library's options
//! model ([`NormalizerSpec`]), which decides what they mean.

use std::path::Path;

use clap::Args;
use urinorm::domain::SuffixList;
use urinorm::escape::escape_str;
use urinorm::line::spec::{NormalizerSpec, RulesFile, SpecError, TextFile, TrackingParams};
use urinorm::normalize::protocol::{Preset, Transform};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::pipeline::input::InputError;
use urinorm::report::ladder::LadderRules;
use urinorm::rules::{RulesFormat, RulesText, SiteRules};

use crate::cli::Error;

/// The rung and transform flags, shared by every command that normalizes.
#[derive(Args, Debug, Default, Clone)]
pub struct RungArgs {
    /// How far up the RFC 3986 §6.2 ladder to go: string, syntax, scheme
    /// (the default) or protocol (the default with --preset or --with).
    #[arg(long, value_name = "RUNG")]
    pub rung: Option<Rung>,
    /// Protocol-rung transforms by preset name: safe, aggressive or ia (default safe).
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
    #[command(flatten)]
    pub rules: RulesArgs,
    /// A newer Public Suffix List (`public_suffix_list.dat`) to use instead
    /// of the one built in (see `urinorm --version`), for strip-www and
    /// `--key domain`.
    #[arg(long, value_name = "FILE")]
    pub psl: Option<std::path::PathBuf>,
}

impl RungArgs {
    /// The options these flags give (the files they name not read yet).
    pub fn spec(&self) -> NormalizerSpec {
        NormalizerSpec {
            rung: self.rung,
            preset: self.preset,
            with: self.with.clone(),
            without: self.without.clone(),
            tracking_params: (self.tracking_params.as_deref())
                .map(|path| TrackingParams::File(TextFile::named(&path_name(path)))),
            rules: self.rules.files(),
            ..NormalizerSpec::default()
        }
    }

    /// The rung the flags ask for (the one named when they contradict).
    pub fn rung(&self) -> Rung {
        Rung::requested(self.rung, self.spec().wants_protocol()).unwrap_or_else(|e| e.rung)
    }

    /// The normalizer the flags describe (and the Public Suffix List they
    /// name put in force).
    pub fn normalizer(&self) -> Result<Normalizer, Error> {
        self.install_psl()?;
        self.spec().normalizer().map_err(Error::from)
    }

    /// Puts the list `--psl` names in force.
    pub fn install_psl(&self) -> Result<(), Error> {
        if let Some(path) = &self.psl {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::Input(InputError::new(&name, e)))?;
            let list = SuffixList::parse(&text)
                .map_err(|e| Error::Usage(format!("--psl '{}': {e}", escape_str(&name))))?;
            // The first list put in force stays: a command builds one normalizer.
            let _ = urinorm::domain::install(list);
        }
        Ok(())
    }
}

/// A path as the options name it: as the user wrote it.
fn path_name(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The site rules files, shared by every command that normalizes and the
/// ladder.
#[derive(Args, Debug, Default, Clone)]
pub struct RulesArgs {
    /// Site rules in urinorm's format, one `HOST-PATTERN ACTION ARGS` per
    /// line (repeatable; the book, "Hosts, domains and site rules"), applied
    /// after the transforms.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<std::path::PathBuf>,
    /// ClearURLs' rules list (`data.min.json`) (repeatable), applied after
    /// the transforms and before the --rules files.
    #[arg(long = "rules-clearurls", value_name = "FILE")]
    pub rules_clearurls: Vec<std::path::PathBuf>,
}

impl RulesArgs {
    /// The files named, as the options model holds them.
    fn files(&self) -> Vec<RulesFile> {
        let named = |format| {
            move |path: &std::path::PathBuf| RulesFile {
                format,
                file: TextFile::named(&path_name(path)),
            }
        };
        (self
            .rules_clearurls
            .iter()
            .map(named(RulesFormat::ClearUrls)))
        .chain(self.rules.iter().map(named(RulesFormat::Lines)))
        .collect()
    }

    /// The files compiled together and each alone, by name, for the ladder.
    pub fn each_file(&self) -> Result<Option<LadderRules>, Error> {
        let spec = NormalizerSpec {
            rules: self.files(),
            ..NormalizerSpec::default()
        };
        let texts = spec.rules_texts()?;
        if texts.is_empty() {
            return Ok(None);
        }
        let compile = |texts: &[RulesText]| SiteRules::compile(texts).map_err(Error::Rules);
        let files = texts
            .iter()
            .map(|text| Ok((text.name.clone(), compile(std::slice::from_ref(text))?)))
            .collect::<Result<_, Error>>()?;
        Ok(Some(LadderRules {
            all: compile(&texts)?,
            files,
        }))
    }
}

impl From<SpecError> for Error {
    fn from(error: SpecError) -> Error {
        match error {
            SpecError::Read { path, error } => Error::Input(InputError::new(&path, error)),
            SpecError::Rules(e) => Error::Rules(e),
            other => Error::Usage(other.to_string()),
        }
    }
}
