//! The scope filter flags, shared by every command that maps lines to keys
//! (`normalize`, `dedup`, `seen add`): what is read into
//! [`ScopeRules`], domain lists from files included.

use std::path::{Path, PathBuf};

use clap::Args;
use urinorm::escape::escape_str;
use urinorm::line::scope::{Scope, ScopeRules};
use urinorm::normalize::Normalizer;
use urinorm::pipeline::input::InputError;

use crate::cli::Error;

/// Which lines' URIs are in scope; the others are counted as filtered.
/// Filters see each URI's canonical form; a line must pass all of them.
#[derive(Args, Debug, Default, Clone)]
pub struct ScopeArgs {
    /// Keep only URIs whose host is D or below it, on label boundaries
    /// (`a.example.com` is below `example.com`, `notexample.com` is not).
    /// Repeatable; `@FILE` reads names from a file, one per line.
    #[arg(long, value_name = "D")]
    pub keep_domain: Vec<String>,
    /// Drop URIs whose host is D or below it (repeatable; `@FILE`).
    #[arg(long, value_name = "D")]
    pub drop_domain: Vec<String>,
    /// Keep only URIs whose host is a domain listed in FILE or below one
    /// (one per line; `#` starts a comment).
    #[arg(long, value_name = "FILE")]
    pub keep_domains: Vec<PathBuf>,
    /// Drop URIs whose host is a domain listed in FILE or below one.
    #[arg(long, value_name = "FILE")]
    pub drop_domains: Vec<PathBuf>,
    /// Keep only URIs that the regular expression RE matches (repeatable:
    /// any of them; the `regex` crate's syntax).
    #[arg(long, value_name = "RE")]
    pub keep_regex: Vec<String>,
    /// Drop URIs that the regular expression RE matches (repeatable).
    #[arg(long, value_name = "RE")]
    pub drop_regex: Vec<String>,
    /// Keep only URIs with one of these schemes (e.g. http,https: link
    /// dumps are full of javascript: and mailto:).
    #[arg(long, value_name = "S,...", value_delimiter = ',')]
    pub keep_scheme: Vec<String>,
}

impl ScopeArgs {
    /// The compiled filters, with domain names written as `normalizer`
    /// writes hosts; `None` when none is given.
    pub fn scope(&self, normalizer: &Normalizer) -> Result<Option<Scope>, Error> {
        let rules = ScopeRules {
            keep_domains: domains(&self.keep_domain, &self.keep_domains, normalizer)?,
            drop_domains: domains(&self.drop_domain, &self.drop_domains, normalizer)?,
            keep_regex: self.keep_regex.clone(),
            drop_regex: self.drop_regex.clone(),
            keep_schemes: self.keep_scheme.clone(),
        };
        Scope::new(&rules, normalizer).map_err(|e| Error::Usage(e.to_string()))
    }
}

/// The domain names given on the command line (`@FILE` read) and in the
/// files, each checked, a bad one named by its file and line.
fn domains(
    given: &[String],
    files: &[PathBuf],
    normalizer: &Normalizer,
) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    let listed = given
        .iter()
        .filter_map(|d| d.strip_prefix('@'))
        .map(Path::new);
    for file in listed.chain(files.iter().map(PathBuf::as_path)) {
        read_list(file, normalizer, &mut names)?;
    }
    names.extend(given.iter().filter(|d| !d.starts_with('@')).cloned());
    Ok(names)
}

/// Appends the names listed in `file`: one per line, `#` to the end of a
/// line a comment, blank lines ignored.
fn read_list(file: &Path, normalizer: &Normalizer, names: &mut Vec<String>) -> Result<(), Error> {
    let name = file.display().to_string();
    let text =
        std::fs::read_to_string(file).map_err(|e| Error::Input(InputError::new(&name, e)))?;
    for (n, line) in text.lines().enumerate() {
        let entry = line.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        urinorm::line::scope::domain(entry, normalizer)
            .map_err(|e| Error::Usage(format!("{}:{}: {e}", escape_str(&name), n + 1)))?;
        names.push(entry.to_string());
    }
    Ok(())
}
