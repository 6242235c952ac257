//! The rung and transform flags and the site rules files, shared by every
//! command that normalizes: what they are read into ([`Normalizer`],
//! [`SiteRules`]).

use clap::Args;
use urinorm::domain::SuffixList;
use urinorm::escape::escape_str;
use urinorm::line::{FRONTIER_PRESET, FRONTIER_WITH};
use urinorm::normalize::protocol::{Preset, ProtocolOptions, Transform};
use urinorm::normalize::{NeedsProtocolRung, Normalizer, Rung};
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
    /// The keys of a frontier (`dedup --seen`, `seen add`, `serve`) when no
    /// flag names a rung or a transform: [`FRONTIER_PRESET`] with
    /// [`FRONTIER_WITH`], as Python's `SeenSet` and the Scrapy filter make
    /// them.
    pub(super) fn frontier_default(&self) -> RungArgs {
        RungArgs {
            preset: Some(FRONTIER_PRESET.parse().expect("a preset's name")),
            with: FRONTIER_WITH.to_vec(),
            ..self.clone()
        }
    }

    /// Whether any flag of the rung or its transforms was given.
    pub(super) fn given(&self) -> bool {
        self.rung.is_some() || self.wants_protocol()
    }

    /// Whether any protocol-rung flag was given.
    fn wants_protocol(&self) -> bool {
        self.preset.is_some()
            || !self.with.is_empty()
            || !self.without.is_empty()
            || self.tracking_params.is_some()
            || self.rules.given()
    }

    /// The rung the flags ask for.
    pub fn rung(&self) -> Rung {
        Rung::requested(self.rung, self.wants_protocol()).unwrap_or_else(|e| e.rung)
    }

    /// The normalizer the flags describe (and the Public Suffix List they
    /// name put in force).
    pub fn normalizer(&self) -> Result<Normalizer, Error> {
        if let Some(path) = &self.psl {
            let name = path.display().to_string();
            let text = std::fs::read_to_string(path)
                .map_err(|e| Error::Input(InputError::new(&name, e)))?;
            let list = SuffixList::parse(&text)
                .map_err(|e| Error::Usage(format!("--psl '{}': {e}", escape_str(&name))))?;
            // The first list put in force stays: a command builds one normalizer.
            let _ = urinorm::domain::install(list);
        }
        let usage = |e: NeedsProtocolRung| {
            Error::Usage(format!(
                "--preset, --with, --without, --tracking-params and the rules files need the protocol rung, not --rung {}",
                e.rung
            ))
        };
        // Checked before the tracking list is read: a lower rung never opens it.
        Rung::requested(self.rung, self.wants_protocol()).map_err(usage)?;
        let tracking_list = match &self.tracking_params {
            Some(path) => Some(read_text(path)?),
            None => None,
        };
        let rules = self.rules.site_rules()?.map(SiteRules::into_rewrite);
        let options = ProtocolOptions {
            preset: self.preset,
            with: &self.with,
            without: &self.without,
            tracking_list: tracking_list.as_deref(),
            rules: rules.as_ref(),
        };
        Normalizer::from_options(self.rung, &options).map_err(usage)
    }
}

/// The site rules files, shared by every command that normalizes and the
/// ladder.
#[derive(Args, Debug, Default, Clone)]
pub struct RulesArgs {
    /// Site rules in urinorm's format, one `HOST-PATTERN ACTION ARGS` per
    /// line (repeatable; README, "Site rules"), applied after the transforms.
    #[arg(long = "rules", value_name = "FILE")]
    pub rules: Vec<std::path::PathBuf>,
    /// ClearURLs' rules list (`data.min.json`) (repeatable), applied after
    /// the transforms and before the --rules files.
    #[arg(long = "rules-clearurls", value_name = "FILE")]
    pub rules_clearurls: Vec<std::path::PathBuf>,
}

impl RulesArgs {
    /// Whether any rules file is named.
    pub fn given(&self) -> bool {
        !self.rules.is_empty() || !self.rules_clearurls.is_empty()
    }

    /// Each file read, ClearURLs' first: their providers apply before the
    /// line rules.
    fn texts(&self) -> Result<Vec<RulesText>, Error> {
        let files = self
            .rules_clearurls
            .iter()
            .map(|path| (path, RulesFormat::ClearUrls))
            .chain(self.rules.iter().map(|path| (path, RulesFormat::Lines)));
        files
            .map(|(path, format)| {
                Ok(RulesText {
                    name: path.display().to_string(),
                    format,
                    text: read_text(path)?,
                })
            })
            .collect()
    }

    /// The files compiled together, if any is named.
    pub fn site_rules(&self) -> Result<Option<SiteRules>, Error> {
        let texts = self.texts()?;
        if texts.is_empty() {
            return Ok(None);
        }
        SiteRules::compile(&texts).map(Some).map_err(Error::Rules)
    }

    /// The files compiled together and each alone, by name, for the ladder.
    pub fn each_file(&self) -> Result<Option<LadderRules>, Error> {
        let texts = self.texts()?;
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

/// A whole text file the flags name (a list, rules).
fn read_text(path: &std::path::Path) -> Result<String, Error> {
    std::fs::read_to_string(path)
        .map_err(|e| Error::Input(InputError::new(&path.display().to_string(), e)))
}
