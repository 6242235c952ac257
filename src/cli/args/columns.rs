//! Which column of a line holds the URI, what its key is, what a crawl
//! index's lines carry: the flags shared by every command that reads lines
//! of URIs, and the line mapper they describe ([`NormalizeLines`]).

use clap::Args;
use urinorm::escape::escape_str;
use urinorm::line::crawl_index::IndexFormat;
use urinorm::line::key::KeyFormat;
use urinorm::line::spec::{Fetchable, NormalizerSpec};
use urinorm::line::{Columns, NormalizeLines};

use super::rung::RungArgs;
use super::scope::ScopeArgs;
use urinorm::pipeline::input::Input;

use crate::cli::{Error, absolute_base, open_each, open_inputs};

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
    /// Write the key into this column (1-based), replacing it, and keep the
    /// --field column as it is; one past the last column appends the key as
    /// a new one (`--field 3 --delimiter ' ' --key surt --key-into 1` on a
    /// CDX index rewrites its SURT keys).
    #[arg(long, value_name = "N")]
    pub key_into: Option<usize>,
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

/// Whether the lines feed a crawler's frontier (a seen store, a service),
/// for `--fetchable auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feeds {
    Frontier,
    Output,
}

impl ColumnArgs {
    /// The options these flags and `rung`'s give, for lines that feed
    /// `feeds`: a frontier's default when no flag names a rung.
    pub fn spec(&self, rung: &RungArgs, feeds: Feeds) -> NormalizerSpec {
        let spec = NormalizerSpec {
            key: self.key,
            lenient: self.line.lenient,
            fetchable: self.fetchable,
            ..rung.spec()
        };
        match feeds {
            Feeds::Frontier => spec.or_frontier_default(),
            Feeds::Output => spec,
        }
    }

    /// The mapper these flags and `rung`'s describe, for lines that feed
    /// `feeds`.
    pub fn mapper(&self, rung: &RungArgs, feeds: Feeds) -> Result<NormalizeLines, Error> {
        rung.install_psl()?;
        let spec = self.spec(rung, feeds);
        let normalizer = spec.normalizer()?;
        let key_fields = self
            .key_fields
            .iter()
            .map(|&n| column(n, "--key-fields"))
            .collect::<Result<Vec<_>, _>>()?;
        if self.line.field.is_none() && !key_fields.is_empty() {
            return Err(Error::Usage("--key-fields needs --field".into()));
        }
        let key_into = self.key_into.map(|n| column(n, "--key-into")).transpose()?;
        if self.line.field.is_none() && key_into.is_some() {
            return Err(Error::Usage("--key-into needs --field".into()));
        }
        let columns = Columns {
            key_fields,
            key_into,
            ..self.line.columns()?
        };
        let frontier = feeds == Feeds::Frontier;
        let scheme_filter = !self.scope.keep_scheme.is_empty();
        Ok(NormalizeLines {
            scope: self.scope.scope(&normalizer)?,
            fetchable: spec.takes_only_fetchable(frontier, scheme_filter),
            // A frontier takes what a crawler fetches, unless a scheme
            // filter names what it takes.
            crawled: frontier && !scheme_filter,
            ..NormalizeLines::new(normalizer, self.key, columns)
        })
    }
}

/// Whether `preset` means URIs with a scheme and a host.
pub use urinorm::line::spec::preset_needs_host as needs_host;

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
    /// The inputs are WARC files (gzipped a record at a time, or not): each
    /// response, revisit, resource and metadata record is read as
    /// cdxj-indexer indexes it, so the judgement is --cdxj's of their index.
    #[arg(long, conflicts_with_all = ["cdx", "cdxj", "digest_field", "field", "base_field", "base", "header"])]
    pub warc: bool,
}

impl IndexArgs {
    /// The crawl index the flags name, if any; a digest column makes the
    /// URI column 1 unless --field names another.
    pub fn format(&self, columns: &mut Columns) -> Result<Option<IndexFormat>, Error> {
        // A WARC file is read as the CDXJ index of its records.
        if self.cdxj || self.warc {
            return Ok(Some(IndexFormat::Cdxj));
        }
        if self.cdx {
            return Ok(Some(IndexFormat::Cdx));
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

    /// The flag that names the crawl index.
    fn flag(&self) -> &'static str {
        match (self.cdx, self.cdxj, self.warc) {
            (true, _, _) => "--cdx",
            (_, true, _) => "--cdxj",
            (_, _, true) => "--warc",
            _ => "--digest-field",
        }
    }

    /// Opens `files` (standard input if none): as WARC files, each read
    /// into the index its records make, with `--warc`; as they are
    /// otherwise.
    pub fn open(&self, files: &[String]) -> Result<Vec<Input>, Error> {
        match self.warc {
            true => open_each(files, Input::open_warc),
            false => open_inputs(files),
        }
    }

    /// Refuses a crawl index whose `lines` other lines came with no capture
    /// of content (`captures`, rejected ones among them):
    /// nothing can be judged by it, and it is most likely not what its flag
    /// says (a run that judged nothing does not end as one that did).
    pub fn refuse_no_captures(&self, captures: u64, lines: u64) -> Result<(), Error> {
        match captures == 0 && lines > 0 {
            true => Err(Error::Usage(format!(
                "the crawl index ({}) held {lines} line{} and no capture of content (a 2xx \
                 response or a revisit, with a digest): is it the index the flag says?",
                self.flag(),
                if lines == 1 { "" } else { "s" },
            ))),
            false => Ok(()),
        }
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
            // A lenient run repairs the base as it repairs each line.
            let mut repaired = Vec::new();
            match self.lenient && urinorm::lenient::repair(base.as_bytes(), &mut repaired) != 0 {
                true => absolute_base(&String::from_utf8_lossy(&repaired))?,
                false => absolute_base(base)?,
            };
        }
        Ok(Columns {
            field,
            delimiter,
            base_field,
            base: self.base.clone(),
            ..self.spec().columns()
        })
    }

    /// What these flags say of how a URI is read (its repairs).
    fn spec(&self) -> NormalizerSpec {
        NormalizerSpec {
            lenient: self.lenient,
            ..NormalizerSpec::default()
        }
    }
}
