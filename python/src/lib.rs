//! The extension module `urinorm._urinorm`: urinorm's normalizer, SURT keys
//! and resolution for Python, the batch loop behind `normalize_batch`, and
//! the seen store behind `SeenSet`. (The Polars plugin behind
//! `urinorm.polars` is a library of its own, `python/polars/`: Polars'
//! crates are compiled only for those who want it.)
//!
//! Nothing here decides what an option means: the rung, preset, transforms
//! and site rules (their texts: Python reads the files) become a normalizer
//! in [`Normalizer::from_options`] and [`SiteRules::compile`], and a SURT
//! key is made by [`normalize_surt_into`], the functions the command line
//! calls, so Python gets the bytes `urinorm normalize` prints. The public
//! Python API (argument defaults, pyarrow arrays) is `urinorm/__init__.py`.

mod arrow;
mod options;
mod seen;

use std::sync::{Arc, Mutex};

use pyo3::create_exception;
use pyo3::exceptions::{PyOverflowError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyString};

use urinorm::UriRef;
use urinorm::fingerprint::fingerprint;
use urinorm::line::key::KeyFormat;
use urinorm::line::spec::NormalizerSpec;
use urinorm::line::{ColumnScratch, Columns, KeyScratch, NormalizeLines};
use urinorm::line::{FRONTIER_PRESET, FRONTIER_WITH};
use urinorm::normalize::protocol::{PRESETS, Transform};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::pipeline::Rejection;
use urinorm::resolve::{SchemeRule, resolve_into};

use options::{Given, RulesGiven};

create_exception!(
    urinorm,
    InvalidUri,
    PyValueError,
    "The input is not a URI reference (RFC 3986), or its host or port cannot be what its scheme names.\n\nstr(e) is the reason, as the command line gives it: 'invalid percent-encoding at byte 10'. Attributes: offset (the 0-based byte offset, or None for a reason about the whole URI), reason (the reason without the offset)."
);

create_exception!(
    urinorm,
    RulesError,
    PyValueError,
    "A site rules file cannot be used: an unknown action, a bad host pattern or regular expression, not ClearURLs' format, or not UTF-8 text.\n\nstr(e) is the command line's message, naming the file and line: 'site.rules:4: unknown action ...'. Attributes: file (its name as given), line (1-based, or None for the whole file), problem (the message without the place)."
);

/// The Python exception for `error`, with its offset and reason as attributes.
fn invalid_uri(py: Python<'_>, error: &Rejection) -> PyErr {
    invalid_uri_in(py, error, None)
}

/// [`invalid_uri`], naming the `argument` at fault when there are two
/// (its message starts `the base: `, its `argument` attribute says it).
fn invalid_uri_in(py: Python<'_>, error: &Rejection, argument: Option<&str>) -> PyErr {
    let message = match argument {
        Some(argument) => format!("the {argument}: {error}"),
        None => error.to_string(),
    };
    let err = InvalidUri::new_err(message);
    let value = err.value(py);
    let attributes = value
        .setattr("offset", error.offset())
        .and_then(|()| value.setattr("reason", error.reason()))
        .and_then(|()| value.setattr("argument", argument));
    match attributes {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The key a batch writes: `key="canonical"` or `key="surt"`.
pub(crate) fn parse_key(key: &str) -> PyResult<KeyFormat> {
    key.parse().map_err(PyValueError::new_err)
}

/// The Python exception for a rules text that cannot be used, with its
/// file, line and problem as attributes.
pub(crate) fn rules_error(py: Python<'_>, error: &urinorm::rules::RulesError) -> PyErr {
    let err = RulesError::new_err(error.to_string());
    let value = err.value(py);
    let attributes = value
        .setattr("file", &error.file)
        .and_then(|()| value.setattr("line", error.line))
        .and_then(|()| value.setattr("problem", &error.problem));
    match attributes {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A normalizer built once from the options, for the functions of `urinorm`
/// to cache (building one parses names, copies the tracking list and
/// compiles the rules).
#[pyclass(frozen, module = "urinorm._urinorm", name = "Normalizer")]
pub(crate) struct PyNormalizer {
    pub(crate) normalizer: Normalizer,
    spec: NormalizerSpec,
}

#[pymethods]
impl PyNormalizer {
    /// Raises ValueError for an unknown rung, preset, transform or key
    /// name, for protocol options given with a rung below protocol,
    /// RulesError for a rules text that cannot be used and OSError for a
    /// rules file that cannot be read. `rules` and `rules_clearurls` are
    /// rules files in urinorm's line format and in ClearURLs'
    /// `data.min.json`, each a path or a `(name, text)` pair; `frontier`:
    /// the keys of a frontier, its default when nothing names a rung.
    #[new]
    #[pyo3(signature = (rung=None, preset=None, with_=Vec::new(), without=Vec::new(), tracking_params=None, rules=Vec::new(), rules_clearurls=Vec::new(), key=None, lenient=false, non_strict=false, frontier=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        rung: Option<String>,
        preset: Option<String>,
        with_: Vec<String>,
        without: Vec<String>,
        tracking_params: Option<Vec<String>>,
        rules: Vec<RulesGiven>,
        rules_clearurls: Vec<RulesGiven>,
        key: Option<String>,
        lenient: bool,
        non_strict: bool,
        frontier: bool,
    ) -> PyResult<Self> {
        let given = Given {
            rung,
            preset,
            with_,
            without,
            tracking_params,
            rules,
            rules_clearurls,
            key,
            lenient,
            non_strict,
            frontier,
        };
        let spec = given.spec().map_err(|e| options::refusal(py, e))?;
        PyNormalizer::of_spec(py, spec)
    }

    /// The normalizer of options shipped by [`PyNormalizer::shipped`] (a
    /// Spark executor's, from the driver's).
    #[staticmethod]
    fn of_shipped(py: Python<'_>, shipped: &str) -> PyResult<Self> {
        let spec = serde_json::from_str(shipped)
            .map_err(|e| PyValueError::new_err(format!("not shipped options: {e}")))?;
        PyNormalizer::of_spec(py, spec)
    }

    /// The options with the files they name read, as JSON, and with how
    /// each value is read (`key`, `lenient`, `non_strict`): what a Polars
    /// expression or a Spark UDF carries to where it runs, so that the
    /// files are read once, here.
    #[pyo3(signature = (key=None, lenient=false, non_strict=false))]
    fn shipped(
        &self,
        py: Python<'_>,
        key: Option<&str>,
        lenient: bool,
        non_strict: bool,
    ) -> PyResult<String> {
        let mut spec = self
            .reading(key, lenient, non_strict)
            .map_err(|e| options::refusal(py, e))?;
        spec.read_files().map_err(|e| options::refusal(py, e))?;
        Ok(serde_json::to_string(&spec).expect("a spec serializes"))
    }

    /// The normalizer of options in their text form (`'preset=safe;
    /// key=host'`: DuckDB's last argument).
    #[staticmethod]
    fn of_text(py: Python<'_>, text: &str) -> PyResult<Self> {
        let spec = text.parse().map_err(|e| options::refusal(py, e))?;
        PyNormalizer::of_spec(py, spec)
    }

    /// The options in their text form, with how each value is read
    /// (`key`, `lenient`, `non_strict`), as [`PyNormalizer::shipped`]
    /// takes them; the files named by their paths.
    #[pyo3(signature = (key=None, lenient=false, non_strict=false))]
    fn options_text(
        &self,
        py: Python<'_>,
        key: Option<&str>,
        lenient: bool,
        non_strict: bool,
    ) -> PyResult<String> {
        let spec = self
            .reading(key, lenient, non_strict)
            .map_err(|e| options::refusal(py, e))?;
        Ok(spec.to_string())
    }

    /// The key the options name (`canonical` unless `key=` said).
    #[getter]
    fn key(&self) -> &'static str {
        self.spec.key.name()
    }

    /// Whether the options repair each value first.
    #[getter]
    fn lenient(&self) -> bool {
        self.spec.lenient
    }

    /// Whether the options resolve by the non-strict rule.
    #[getter]
    fn non_strict(&self) -> bool {
        self.spec.non_strict
    }

    /// What the site rules hold and their fingerprint (what a seen store
    /// records), or None without rules.
    #[getter]
    fn rules(&self) -> Option<String> {
        self.normalizer.rules().map(|r| r.describe().to_string())
    }

    /// The canonical form of `uri` (repaired first if `lenient`); raises
    /// InvalidUri.
    #[pyo3(signature = (uri, lenient=false))]
    fn normalize(&self, py: Python<'_>, uri: &str, lenient: bool) -> PyResult<String> {
        let out = self.key_of(py, uri, KeyFormat::Canonical, lenient)?;
        Ok(String::from_utf8(out).expect("canonical forms are ASCII"))
    }

    /// The SURT key of the canonical form of `uri`; raises InvalidUri.
    #[pyo3(signature = (uri, lenient=false))]
    fn surt(&self, py: Python<'_>, uri: &str, lenient: bool) -> PyResult<String> {
        let out = self.key_of(py, uri, KeyFormat::Surt, lenient)?;
        Ok(String::from_utf8(out).expect("SURT keys of canonical forms are ASCII"))
    }

    /// The stable 128-bit fingerprint (XXH3-128, big-endian) of the key of
    /// `uri`: the 16 bytes the seen store keeps; raises InvalidUri.
    #[pyo3(signature = (uri, key, lenient=false))]
    fn fingerprint<'py>(
        &self,
        py: Python<'py>,
        uri: &str,
        key: &str,
        lenient: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let out = self.key_of(py, uri, parse_key(key)?, lenient)?;
        Ok(PyBytes::new(py, &fingerprint(&out)))
    }

    /// Normalizes an iterable of `str` or `None` into the buffers of an
    /// Arrow string array (or, with `fingerprints`, of a
    /// `fixed_size_binary(16)` array of the keys' fingerprints); a `None` or
    /// an invalid reference is a null.
    #[pyo3(signature = (values, key, fingerprints=false, threads=None, reading=Reading::default()))]
    fn batch_list<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        key: &str,
        fingerprints: bool,
        threads: Option<usize>,
        reading: Reading,
    ) -> PyResult<Finished> {
        // The items are kept alive here, so the text borrowed from them
        // stays valid while the loop runs without the GIL.
        let items = values
            .try_iter()?
            .map(|item| {
                let item = item?;
                if item.is_none() {
                    return Ok(None);
                }
                item.cast_into::<PyString>().map(Some).map_err(|e| {
                    PyTypeError::new_err(format!(
                        "normalize_batch takes str or None items, not {}",
                        e.into_inner().get_type()
                    ))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let texts = items
            .iter()
            .map(|item| item.as_ref().map(|s| s.to_str()).transpose())
            .collect::<PyResult<Vec<_>>>()?;
        let made = batch_values(fingerprints, false);
        self.run(py, &texts[..], made, key, threads, &reading)
    }

    /// Normalizes a pyarrow `string` or `large_string` array (anything with
    /// `__arrow_c_array__`), read in place through the Arrow C data
    /// interface, into the buffers of an Arrow string array whose offsets
    /// are as wide as the input's (or, with `fingerprints`, of a
    /// `fixed_size_binary(16)` array).
    #[pyo3(signature = (array, key, fingerprints=false, threads=None, reading=Reading::default()))]
    fn batch_arrow<'py>(
        &self,
        py: Python<'py>,
        array: &Bound<'py, PyAny>,
        key: &str,
        fingerprints: bool,
        threads: Option<usize>,
        reading: Reading,
    ) -> PyResult<Finished> {
        // Held until the loop is done: the array lives as long as its capsules.
        let capsules = Capsules::of(array)?;
        let strings = capsules.strings()?;
        let made = batch_values(fingerprints, strings.large());
        self.run(py, &strings, made, key, threads, &reading)
    }

    /// As [`PyNormalizer::batch_arrow`] for `references` resolved, row for
    /// row, against `bases` (two string arrays of one length); a row whose
    /// base is null or not an absolute URI is null.
    #[pyo3(signature = (references, bases, key, fingerprints=false, threads=None, reading=Reading::default()))]
    #[allow(clippy::too_many_arguments)]
    fn batch_resolve<'py>(
        &self,
        py: Python<'py>,
        references: &Bound<'py, PyAny>,
        bases: &Bound<'py, PyAny>,
        key: &str,
        fingerprints: bool,
        threads: Option<usize>,
        reading: Reading,
    ) -> PyResult<Finished> {
        let (references, bases) = (Capsules::of(references)?, Capsules::of(bases)?);
        let rows = arrow::Resolving {
            references: references.strings()?,
            bases: bases.strings()?,
        };
        one_length(&[&rows.references, &rows.bases], "references and bases")?;
        let made = batch_values(fingerprints, rows.references.large());
        self.run(py, &rows, made, key, threads, &reading)
    }

    /// As [`PyNormalizer::batch_arrow`] for rows of several `columns`
    /// (string arrays of one length), whose key is each column's key joined
    /// by `delimiter`, as `--key-fields` makes it; a row with a null or an
    /// invalid value in any column is null.
    #[pyo3(signature = (columns, delimiter, key, fingerprints=false, threads=None, reading=Reading::default()))]
    #[allow(clippy::too_many_arguments)]
    fn batch_columns<'py>(
        &self,
        py: Python<'py>,
        columns: Vec<Bound<'py, PyAny>>,
        delimiter: u8,
        key: &str,
        fingerprints: bool,
        threads: Option<usize>,
        reading: Reading,
    ) -> PyResult<Finished> {
        if columns.is_empty() {
            return Err(PyValueError::new_err(
                "a key of no columns: give at least one",
            ));
        }
        let capsules = columns
            .iter()
            .map(Capsules::of)
            .collect::<PyResult<Vec<_>>>()?;
        let rows = arrow::Joined {
            columns: capsules
                .iter()
                .map(Capsules::strings)
                .collect::<PyResult<_>>()?,
            delimiter,
        };
        one_length(&rows.columns.iter().collect::<Vec<_>>(), "the columns")?;
        let made = batch_values(fingerprints, rows.columns.iter().any(|c| c.large()));
        self.run(py, &rows, made, key, threads, &reading)
    }
}

impl PyNormalizer {
    /// The `key` of one `uri` (repaired first if `lenient`), as a batch
    /// makes it; an InvalidUri at the user's byte.
    fn key_of(
        &self,
        py: Python<'_>,
        uri: &str,
        key: KeyFormat,
        lenient: bool,
    ) -> PyResult<Vec<u8>> {
        // What a value's reading and judging depend on, without the
        // options' files: a scalar call copies no rules text.
        let spec = NormalizerSpec {
            key,
            lenient: lenient || self.spec.lenient,
            preset: self.spec.preset,
            non_strict: self.spec.non_strict,
            fetchable: self.spec.fetchable,
            ..NormalizerSpec::default()
        };
        let lines = NormalizeLines::of_values(&spec, self.normalizer.clone());
        let mut out = Vec::with_capacity(uri.len());
        (lines.write_value_key(uri.as_bytes(), None, &mut out, &mut KeyScratch::default()))
            .map_err(|e| invalid_uri(py, &e))?;
        Ok(out)
    }

    /// The options with how each value is read added to them.
    fn reading(
        &self,
        key: Option<&str>,
        lenient: bool,
        non_strict: bool,
    ) -> Result<NormalizerSpec, urinorm::line::spec::SpecError> {
        let mut spec = self.spec.clone();
        if let Some(key) = key {
            spec.set("key", &[key])?;
        }
        spec.lenient |= lenient;
        spec.non_strict |= non_strict;
        Ok(spec)
    }

    /// The normalizer `spec` makes. Compiling a large list (ClearURLs')
    /// takes a while: done without the GIL.
    fn of_spec(py: Python<'_>, spec: NormalizerSpec) -> PyResult<Self> {
        match py.detach(|| spec.normalizer()) {
            Ok(normalizer) => Ok(PyNormalizer { normalizer, spec }),
            Err(e) => Err(options::refusal(py, e)),
        }
    }

    /// Makes `made` of every row of `rows` with the GIL released: the
    /// prologue and epilogue every batch shares.
    fn run(
        &self,
        py: Python<'_>,
        rows: &(impl arrow::Rows + ?Sized),
        made: arrow::BatchValues,
        key: &str,
        threads: Option<usize>,
        reading: &Reading,
    ) -> PyResult<Finished> {
        let spec = (self.reading(Some(key), reading.lenient, reading.non_strict))
            .map_err(|e| options::refusal(py, e))?;
        let pool = pool(threads)?;
        let lines = NormalizeLines {
            columns: reading.columns(py, &spec)?,
            ..NormalizeLines::of_values(&spec, self.normalizer.clone())
        };
        let maker = arrow::KeyMaker {
            lines: &lines,
            reasons: reading.reasons,
        };
        let batch = py.detach(|| arrow::make(&maker, made, rows, pool.as_deref()).finish());
        batch.map_err(|e| PyOverflowError::new_err(e.to_string()))
    }
}

/// ValueError unless the `arrays` (`what`) are of one length.
fn one_length(arrays: &[&arrow::StringArray<'_>], what: &str) -> PyResult<()> {
    let lengths: Vec<usize> = arrays.iter().map(|a| a.len()).collect();
    match lengths.windows(2).all(|pair| pair[0] == pair[1]) {
        true => Ok(()),
        false => Err(PyValueError::new_err(format!(
            "{what} are of different lengths ({lengths:?}): one value of each a row"
        ))),
    }
}

/// What a batch makes: keys, with offsets as wide as the input's, or
/// fingerprints.
fn batch_values(fingerprints: bool, large: bool) -> arrow::BatchValues {
    match fingerprints {
        true => arrow::BatchValues::Fingerprints,
        false => arrow::BatchValues::Keys { large },
    }
}

/// The two capsules of an Arrow array (`__arrow_c_array__`), held while
/// the array is read: it lives as long as they do.
struct Capsules<'py>(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>);

impl<'py> Capsules<'py> {
    fn of(array: &Bound<'py, PyAny>) -> PyResult<Capsules<'py>> {
        let (schema, array) = array.call_method0("__arrow_c_array__")?.extract()?;
        Ok(Capsules(schema, array))
    }

    fn strings(&self) -> PyResult<arrow::StringArray<'_>> {
        arrow::StringArray::borrow(&self.0, &self.1)
    }
}

/// How each value is read before it is normalized: repaired (`lenient`,
/// the command line's `--lenient`), resolved against one `base` (its
/// `--base`), a reference with a scheme read by the non-strict rule of
/// RFC 3986 §5.2.2 (`non_strict`).
#[derive(Default, FromPyObject)]
struct Reading {
    #[pyo3(item)]
    lenient: bool,
    #[pyo3(item)]
    base: Option<String>,
    #[pyo3(item)]
    non_strict: bool,
    /// Beside the keys, why each null row has none.
    #[pyo3(item)]
    reasons: bool,
}

impl Reading {
    /// The columns of `spec` with this reading's base; InvalidUri naming
    /// the base when it is not an absolute URI.
    fn columns(&self, py: Python<'_>, spec: &NormalizerSpec) -> PyResult<Columns> {
        let columns = Columns {
            base: self.base.clone(),
            ..spec.columns()
        };
        if self.base.is_some() {
            // The empty reference resolves to the base: what fails is the
            // base's (repaired first when lenient, as every row's is).
            let mut scratch = ColumnScratch::default();
            (columns.with_reference(b"", None, &mut scratch, |_| Ok(())))
                .map_err(|e| invalid_uri_in(py, &e, Some("base")))?;
        }
        Ok(columns)
    }
}

/// How a reference with a scheme is resolved (RFC 3986 §5.2.2): by the
/// non-strict rule (`http:g` relative to an `http` base) when asked for.
pub(crate) fn scheme_rule(non_strict: bool) -> SchemeRule {
    match non_strict {
        true => SchemeRule::NonStrict,
        false => SchemeRule::Strict,
    }
}

/// The pool of `threads` threads a batch runs on (`None`: one thread a
/// core), made once per count and kept; `None` for one thread, which is
/// the calling one.
fn pool(threads: Option<usize>) -> PyResult<Option<Arc<rayon::ThreadPool>>> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let threads = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if threads == 1 {
        return Ok(None);
    }
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, pool)) = pools.iter().find(|(n, _)| *n == threads) {
        return Ok(Some(Arc::clone(pool)));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("urinorm-batch-{i}"))
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("no thread pool of {threads}: {e}")))?;
    let pool = Arc::new(pool);
    pools.push((threads, Arc::clone(&pool)));
    Ok(Some(pool))
}

/// A batch's keys (or fingerprints), and the reasons of its nulls when
/// asked for.
type Finished = (arrow::Keys, Option<arrow::Keys>);

/// Resolves `reference` against `base` (RFC 3986 §5.2; with `non_strict`,
/// the non-strict reading of §5.2.2), each repaired first if `lenient`;
/// raises InvalidUri naming the argument at fault (`argument`: "base" or
/// "reference"). The target is as §5.2 makes it, not normalized:
/// `resolve_batch` gives its key (`normalize(resolve(b, r))`).
#[pyfunction]
#[pyo3(signature = (base, reference, lenient=false, non_strict=false))]
fn resolve(
    py: Python<'_>,
    base: &str,
    reference: &str,
    lenient: bool,
    non_strict: bool,
) -> PyResult<String> {
    let at_fault = |argument| move |e: Rejection| invalid_uri_in(py, &e, Some(argument));
    let repaired = |text: &str, argument| -> PyResult<Vec<u8>> {
        let columns = Columns {
            lenient,
            ..Columns::default()
        };
        let mut scratch = ColumnScratch::default();
        // Parsed inside: an error's offset then counts in the text as
        // given, not as repaired.
        let (bytes, _) = columns
            .with_reference(text.as_bytes(), None, &mut scratch, |uri| {
                Ok(UriRef::parse_bytes(uri).map(|_| uri.to_vec())?)
            })
            .map_err(at_fault(argument))?;
        Ok(bytes)
    };
    let (base, reference) = (repaired(base, "base")?, repaired(reference, "reference")?);
    let base = UriRef::parse_bytes(&base).map_err(|e| at_fault("base")(e.into()))?;
    let reference = UriRef::parse_bytes(&reference).map_err(|e| at_fault("reference")(e.into()))?;
    let rule = scheme_rule(non_strict);
    let mut out = Vec::new();
    // What resolution itself refuses is the base's: one without a scheme.
    resolve_into(&base, &reference, rule, &mut out).map_err(|e| at_fault("base")(e.into()))?;
    // The target is recomposed from components of two ASCII references.
    Ok(String::from_utf8(out).expect("a resolved URI is ASCII"))
}

#[pymodule]
fn _urinorm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InvalidUri", m.py().get_type::<InvalidUri>())?;
    m.add("RulesError", m.py().get_type::<RulesError>())?;
    m.add_class::<PyNormalizer>()?;
    m.add_class::<arrow::Keys>()?;
    m.add_class::<seen::PySeenSet>()?;
    m.add("SeenStoreError", m.py().get_type::<seen::SeenStoreError>())?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(seen::seen_config, m)?)?;
    m.add_function(wrap_pyfunction!(seen::parse_duration_seconds, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RUNGS", Rung::ALL.map(Rung::name).to_vec())?;
    m.add("TRANSFORMS", Transform::ALL.map(Transform::name).to_vec())?;
    let presets: Vec<(&str, Vec<&str>)> = PRESETS
        .iter()
        .map(|p| (p.name, p.transforms().map(Transform::name).collect()))
        .collect();
    m.add("PRESETS", presets)?;
    m.add("FRONTIER_PRESET", FRONTIER_PRESET)?;
    m.add(
        "FRONTIER_WITH",
        FRONTIER_WITH.iter().map(|t| t.name()).collect::<Vec<_>>(),
    )?;
    Ok(())
}
