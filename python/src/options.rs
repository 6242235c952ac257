//! Python's keyword arguments mapped onto the library's options model
//! ([`NormalizerSpec`]): each argument set by its name, as DuckDB's option
//! text and the command line's flags are; the model parses every value,
//! orders the rules and makes every refusal. Here a refusal only becomes
//! its Python exception.

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

use urinorm::line::spec::{NormalizerSpec, RulesFile, SpecError, TextFile};
use urinorm::rules::RulesFormat;
use urinorm::sys::os_error::Reason;

use crate::rules_error;

/// A rules file as Python names it: its path, or `(name, text)` when the
/// caller read it.
#[derive(FromPyObject)]
pub(crate) enum RulesGiven {
    Text(String, String),
    Path(String),
}

/// The keyword arguments every function of `urinorm` shares, as given.
#[derive(Default)]
pub(crate) struct Given {
    pub rung: Option<String>,
    pub preset: Option<String>,
    pub with_: Vec<String>,
    pub without: Vec<String>,
    pub tracking_params: Option<Vec<String>>,
    pub rules: Vec<RulesGiven>,
    pub rules_clearurls: Vec<RulesGiven>,
    pub key: Option<String>,
    pub lenient: bool,
    pub non_strict: bool,
    /// A frontier's keys: its default when no argument names a rung.
    pub frontier: bool,
}

impl Given {
    /// The options model these arguments describe; no file is read yet.
    pub(crate) fn spec(self) -> Result<NormalizerSpec, SpecError> {
        let mut spec = NormalizerSpec::default();
        for (option, value) in [
            ("rung", &self.rung),
            ("preset", &self.preset),
            ("key", &self.key),
        ] {
            if let Some(value) = value {
                spec.set(option, &[value])?;
            }
        }
        spec.set("with", &strs(&self.with_))?;
        spec.set("without", &strs(&self.without))?;
        if let Some(names) = &self.tracking_params {
            spec.set("tracking_params", &strs(names))?;
        }
        for (format, files) in [
            (RulesFormat::ClearUrls, self.rules_clearurls),
            (RulesFormat::Lines, self.rules),
        ] {
            spec.rules.extend(files.into_iter().map(|given| RulesFile {
                format,
                file: match given {
                    RulesGiven::Path(path) => TextFile::named(&path),
                    RulesGiven::Text(name, text) => TextFile {
                        name,
                        text: Some(text),
                    },
                },
            }));
        }
        spec.lenient = self.lenient;
        spec.non_strict = self.non_strict;
        Ok(match self.frontier {
            true => spec.or_frontier_default(),
            false => spec,
        })
    }
}

/// The values as the model's setter takes them.
fn strs(values: &[String]) -> Vec<&str> {
    values.iter().map(String::as_str).collect()
}

/// The Python exception of a refusal: RulesError for a rules text,
/// OSError (its errno's subclass, naming the file) for a file that cannot
/// be read, ValueError for the rest.
pub(crate) fn refusal(py: Python<'_>, error: SpecError) -> PyErr {
    match error {
        SpecError::Rules(e) => rules_error(py, &e),
        SpecError::Read { path, error } => match error.raw_os_error() {
            Some(errno) => PyOSError::new_err((errno, Reason(&error).to_string(), path)),
            None => PyOSError::new_err(format!("{path}: {error}")),
        },
        other => PyValueError::new_err(other.to_string()),
    }
}
