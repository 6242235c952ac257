//! `urinorm normalize`: each line's canonical form at a rung, in order.

use clap::Args;
use serde_json::json;
use urinorm::crawl_index::IndexFormat;
use urinorm::domain::SuffixList;
use urinorm::escape::escape_str;
use urinorm::ladder_report::LadderRules;
use urinorm::mapper::{FRONTIER_PRESET, FRONTIER_WITH};
use urinorm::normalize::protocol::{Preset, ProtocolOptions, Transform};
use urinorm::normalize::{NeedsProtocolRung, Normalizer, Rung};
use urinorm::pipeline::Mode;
use urinorm::pipeline::input::InputError;
use urinorm::resolve::SchemeRule;
use urinorm::rules::{RulesFormat, RulesText, SiteRules};

use super::scope::ScopeArgs;
use crate::cli::engine::{Job, RunArgs, execute};
use crate::cli::{Error, Outcome, absolute_base};
use urinorm::key::KeyFormat;
use urinorm::mapper::{Columns, NormalizeLines};

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
    fn frontier_default(&self) -> RungArgs {
        RungArgs {
            preset: Some(FRONTIER_PRESET.parse().expect("a preset's name")),
            with: FRONTIER_WITH.to_vec(),
            ..self.clone()
        }
    }

    /// Whether any flag of the rung or its transforms was given.
    fn given(&self) -> bool {
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

/// The key of each line, and where the URI is in it; shared by `normalize`
/// and `dedup`.
#[derive(Args, Debug, Default, Clone)]
pub struct ColumnArgs {
    /// The key written for each line: its canonical form, a SURT, its host,
    /// or its registrable domain (Public Suffix List; an IP literal or a
    /// public suffix is its own). `dedup --key domain --emit count` counts
    /// lines per domain.
    #[arg(long, value_enum, default_value_t = KeyFormat::Canonical)]
    pub key: KeyFormat,
    /// Deduplicate on these normalized columns together (e.g. 1,2 for a
    /// page-link edge); default: the --field column.
    #[arg(long, value_name = "N,M", value_delimiter = ',')]
    pub key_fields: Vec<usize>,
    #[command(flatten)]
    pub line: LineArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Reject the lines a crawler can never fetch: a relative reference
    /// (no scheme) and an http(s) URI without a host (RFC 9110 §4.2.1).
    /// `auto` (the default) does where a frontier is fed or a key needs a
    /// host: --seen, serve, seen add, --key surt|host|domain, --preset ia,
    /// --keep-scheme; `always` (the flag alone) and `never` decide it.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = Fetchable::Auto, num_args = 0..=1, require_equals = true, default_missing_value = "always")]
    pub fetchable: Fetchable,
}

/// When only fetchable URIs are taken (`--fetchable`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Fetchable {
    /// Where a frontier is fed or a key needs a host.
    #[default]
    Auto,
    Always,
    Never,
}

/// Whether the lines feed a crawler's frontier (a seen store, a service),
/// for `--fetchable auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feeds {
    Frontier,
    Output,
}

impl ColumnArgs {
    /// The mapper these flags and `rung`'s describe, for lines that feed
    /// `feeds`.
    pub fn mapper(&self, rung: &RungArgs, feeds: Feeds) -> Result<NormalizeLines, Error> {
        let frontier_default;
        let rung = match feeds == Feeds::Frontier && !rung.given() {
            true => {
                frontier_default = rung.frontier_default();
                &frontier_default
            }
            false => rung,
        };
        let normalizer = rung.normalizer()?;
        let key_fields = self
            .key_fields
            .iter()
            .map(|&n| column(n, "--key-fields"))
            .collect::<Result<Vec<_>, _>>()?;
        if self.line.field.is_none() && !key_fields.is_empty() {
            return Err(Error::Usage("--key-fields needs --field".into()));
        }
        let columns = Columns {
            key_fields,
            ..self.line.columns()?
        };
        // A frontier fetches what it is fed; a SURT, a host or a domain
        // key, the Internet Archive's keys and a scheme filter all mean a
        // URI with a scheme and a host.
        let needs_host = self.key != KeyFormat::Canonical
            || rung.preset.as_ref().is_some_and(needs_host)
            || !self.scope.keep_scheme.is_empty();
        let fetchable = match self.fetchable {
            Fetchable::Auto => feeds == Feeds::Frontier || needs_host,
            Fetchable::Always => true,
            Fetchable::Never => false,
        };
        Ok(NormalizeLines {
            scope: self.scope.scope(&normalizer)?,
            fetchable,
            // A frontier takes what a crawler fetches, unless a scheme
            // filter names what it takes.
            crawled: feeds == Feeds::Frontier && self.scope.keep_scheme.is_empty(),
            ..NormalizeLines::new(normalizer, self.key, columns)
        })
    }
}

/// Whether `preset` means URIs with a scheme and a host: the Internet
/// Archive's keys are of URIs a crawler fetched.
pub fn needs_host(preset: &Preset) -> bool {
    preset.name == "ia"
}

/// Which column of a line holds the URI, and what is done to it first;
/// shared by every command that reads lines of URIs (`ladder` too).
#[derive(Args, Debug, Default, Clone)]
pub struct LineArgs {
    /// Normalize this column (1-based) and keep the others byte for byte.
    #[arg(long, value_name = "N")]
    pub field: Option<usize>,
    /// The column separator for --field (one byte; default tab).
    #[arg(long, value_name = "C", default_value = "\t")]
    pub delimiter: String,
    /// Resolve the --field column against the URI in this column first (RFC 3986 §5.2).
    #[arg(long, value_name = "M")]
    pub base_field: Option<usize>,
    /// Resolve every URI against this base first (RFC 3986 §5.2).
    #[arg(long, value_name = "URI", conflicts_with = "base_field")]
    pub base: Option<String>,
    /// Repair what browsers repair (RFC 3986 Appendix C): surrounding
    /// whitespace, <...> and quotes, spaces and non-ASCII percent-encoded,
    /// a lone '%'. Each repair is counted in the stats.
    #[arg(long)]
    pub lenient: bool,
}

/// The lines are a crawl index: where their content digests are.
#[derive(Args, Debug, Default, Clone)]
pub struct IndexArgs {
    /// The lines carry a content digest in this column (1-based; the URI is
    /// in --field, 1 if not given).
    #[arg(long, value_name = "N", conflicts_with_all = ["cdx", "cdxj"])]
    pub digest_field: Option<usize>,
    /// The inputs are CDX indexes (a ` CDX` header line names the fields;
    /// without one, the classic `N b a m s k r M S V g`); the digests of
    /// 2xx captures and revisits are the evidence.
    #[arg(long, conflicts_with_all = ["cdxj", "field", "base_field", "base", "header"])]
    pub cdx: bool,
    /// The inputs are CDXJ indexes (`SURT TIMESTAMP {json}` with url,
    /// digest, status, mime).
    #[arg(long, conflicts_with_all = ["field", "base_field", "base", "header"])]
    pub cdxj: bool,
}

impl IndexArgs {
    /// The crawl index the flags name, if any; a digest column makes the
    /// URI column 1 unless --field names another.
    pub fn format(&self, columns: &mut Columns) -> Result<Option<IndexFormat>, Error> {
        if self.cdx {
            return Ok(Some(IndexFormat::Cdx));
        }
        if self.cdxj {
            return Ok(Some(IndexFormat::Cdxj));
        }
        let Some(n) = self.digest_field else {
            return Ok(None);
        };
        let column = column(n, "--digest-field")?;
        let field = *columns.field.get_or_insert(0);
        if column == field || Some(column) == columns.base_field {
            return Err(Error::Usage(format!(
                "--digest-field {n} is the column of a URI (--field {}{})",
                field + 1,
                columns
                    .base_field
                    .map_or(String::new(), |b| format!(", --base-field {}", b + 1))
            )));
        }
        Ok(Some(IndexFormat::Digest {
            column,
            delimiter: columns.delimiter,
        }))
    }
}

/// The 0-based column of `--flag n`.
fn column(n: usize, flag: &str) -> Result<usize, Error> {
    n.checked_sub(1)
        .ok_or_else(|| Error::Usage(format!("{flag} counts columns from 1")))
}

impl LineArgs {
    /// The columns these flags describe (no key fields).
    pub fn columns(&self) -> Result<Columns, Error> {
        let delimiter = match self.delimiter.as_str() {
            "\\t" | "\t" => b'\t',
            d if d.len() == 1 => d.as_bytes()[0],
            d => {
                return Err(Error::Usage(format!(
                    "--delimiter takes one byte, not '{}'",
                    escape_str(d)
                )));
            }
        };
        let field = self.field.map(|n| column(n, "--field")).transpose()?;
        let base_field = self
            .base_field
            .map(|n| column(n, "--base-field"))
            .transpose()?;
        if field.is_none() && base_field.is_some() {
            return Err(Error::Usage("--base-field needs --field".into()));
        }
        if let Some(base) = &self.base {
            absolute_base(base)?;
        }
        Ok(Columns {
            field,
            delimiter,
            key_fields: Vec::new(),
            base_field,
            base: self.base.clone(),
            lenient: self.lenient,
            scheme_rule: SchemeRule::Strict,
        })
    }
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
