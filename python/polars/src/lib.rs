//! The Polars expression plugin behind `urinorm.polars`, a library of its
//! own (the Python module `urinorm_polars`), so that only those who use
//! Polars compile Polars' crates: Polars loads this library and calls each
//! `#[polars_expr]` function (through pyo3-polars' plugin ABI) on a chunk of
//! a column, on its own threads, without the GIL. A call reads its options
//! from the keyword arguments the expression was made with (pickled by
//! Polars) and makes one value a row with the line mapper's
//! [`NormalizeLines::write_value_key`], as the Python package's batches do.

use std::sync::{Arc, Mutex};

use polars::prelude::*;
use pyo3_polars::derive::polars_expr;
use serde::Deserialize;

use pyo3::prelude::{Bound, PyModule, PyModuleMethods, PyResult, pymodule};
use urinorm::fingerprint::fingerprint;
use urinorm::line::spec::NormalizerSpec;
use urinorm::line::{Columns, KeyScratch, NormalizeLines};
use urinorm::normalize::Normalizer;

/// The module Python imports to find this library (and check that it was
/// built with the `urinorm` package beside it: the options are shipped
/// between them as JSON of this version's `NormalizerSpec`).
#[pymodule]
fn urinorm_polars(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))
}

/// A row to make a key of: a reference, and the base it is resolved
/// against when the row has its own.
type Row<'a> = (&'a [u8], Option<&'a [u8]>);

/// An expression's keyword arguments (made in `urinorm/polars.py`).
#[derive(Deserialize)]
struct Kwargs {
    /// The options, shipped (`Normalizer.shipped()`: JSON, the files read).
    spec: String,
    /// One base every value is resolved against.
    base: Option<String>,
}

/// Options and the normalizer they make.
type Built = (NormalizerSpec, Normalizer);

/// The options `shipped` carries and the normalizer they make, built once
/// and kept (a few at a time: each may hold compiled rules) for every
/// chunk of every expression made with the same options.
fn normalizer(shipped: &str) -> PolarsResult<Arc<Built>> {
    const KEPT: usize = 8;
    static BUILT: Mutex<Vec<(String, Arc<Built>)>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, made)) = built.iter().find(|(s, _)| s == shipped) {
        return Ok(Arc::clone(made));
    }
    // Python built the same normalizer when it made the expression, so a
    // refusal here is a spec that did not come from `urinorm.polars`.
    let spec: NormalizerSpec =
        serde_json::from_str(shipped).map_err(|e| polars_err!(ComputeError: "{e}"))?;
    let normalizer = spec
        .normalizer()
        .map_err(|e| polars_err!(ComputeError: "{e}"))?;
    let made = Arc::new((spec, normalizer));
    if built.len() == KEPT {
        built.remove(0);
    }
    built.push((shipped.to_string(), Arc::clone(&made)));
    Ok(made)
}

/// Makes a value of each row with the expression's options: `made` is
/// called with the line mapper, the row (`None` when null) and the buffers
/// it may reuse.
fn each_row<'r>(
    kwargs: &Kwargs,
    rows: impl Iterator<Item = Option<Row<'r>>>,
    mut made: impl FnMut(&NormalizeLines, Option<Row<'r>>, &mut KeyScratch),
) -> PolarsResult<()> {
    let built = normalizer(&kwargs.spec)?;
    let (spec, normalizer) = &*built;
    let lines = NormalizeLines {
        columns: Columns {
            base: kwargs.base.clone(),
            ..spec.columns()
        },
        ..NormalizeLines::of_values(spec, normalizer.clone())
    };
    let mut scratch = KeyScratch::default();
    for row in rows {
        made(&lines, row, &mut scratch);
    }
    Ok(())
}

/// The output of a function of URIs, named after its first input, of
/// `dtype`; a Polars error (not a panic: pyo3-polars catches none in an
/// `output_type` function) for an input that is not text.
fn output(inputs: &[Field], dtype: DataType) -> PolarsResult<Field> {
    for input in inputs {
        if !takes(input.dtype()) {
            polars_bail!(SchemaMismatch: "urinorm takes strings, not {} ('{}')", input.dtype(), input.name());
        }
    }
    Ok(Field::new(inputs[0].name().clone(), dtype))
}

fn strings(inputs: &[Field]) -> PolarsResult<Field> {
    output(inputs, DataType::String)
}

fn binaries(inputs: &[Field]) -> PolarsResult<Field> {
    output(inputs, DataType::Binary)
}

/// Whether a column of `dtype` holds text: strings, or the categories of
/// a `Categorical` or an `Enum` (read as their strings).
fn takes(dtype: &DataType) -> bool {
    matches!(
        dtype,
        DataType::String | DataType::Categorical(..) | DataType::Enum(..) | DataType::Null
    )
}

/// The inputs as string columns: a categorical one cast to its strings.
fn as_strings(inputs: &[Series]) -> PolarsResult<Vec<Series>> {
    (inputs.iter())
        .map(|input| match input.dtype() {
            DataType::String => Ok(input.clone()),
            dtype if takes(dtype) => input.cast(&DataType::String),
            dtype => polars_bail!(SchemaMismatch: "urinorm takes strings, not {dtype}"),
        })
        .collect()
}

/// Rows, one at a time, `None` where a value is null.
type RowIter<'a> = Box<dyn Iterator<Item = Option<Row<'a>>> + 'a>;

/// The rows of an expression's inputs: the URIs (`inputs[0]`), and with a
/// second input, the bases each is resolved against; a column of one
/// value (a literal) stands for every row.
fn rows<'a>(inputs: &'a [Series]) -> PolarsResult<(usize, RowIter<'a>)> {
    let references = inputs[0].str()?;
    let Some(bases) = inputs.get(1) else {
        let rows = references.iter().map(|r| r.map(|r| (r.as_bytes(), None)));
        return Ok((references.len(), Box::new(rows)));
    };
    let bases = bases.str()?;
    let len = match (references.len(), bases.len()) {
        (a, b) if a == b || b == 1 => a,
        (1, b) => b,
        (a, b) => {
            polars_bail!(ShapeMismatch: "{a} references and {b} bases: one base a reference, or one for all")
        }
    };
    let values = |column: &'a StringChunked| -> Box<dyn Iterator<Item = Option<&'a str>> + 'a> {
        match column.len() {
            1 if len != 1 => Box::new(std::iter::repeat_n(column.get(0), len)),
            _ => Box::new(column.iter()),
        }
    };
    let rows = values(references)
        .zip(values(bases))
        .map(|(reference, base)| Some((reference?.as_bytes(), Some(base?.as_bytes()))));
    Ok((len, Box::new(rows)))
}

/// The name of the output: the URIs'.
fn name(inputs: &[Series]) -> PlSmallStr {
    inputs[0].name().clone()
}

/// Calls `take` with the key of each row (`None` where it has none), in
/// order: the loop of the functions that make keys.
fn keys_of(
    inputs: &[Series],
    kwargs: &Kwargs,
    mut take: impl FnMut(Option<&[u8]>),
) -> PolarsResult<()> {
    let inputs = as_strings(inputs)?;
    let (_, rows) = rows(&inputs)?;
    let mut key = Vec::new();
    each_row(kwargs, rows, |lines, row, scratch| {
        key.clear();
        match row.map(|(uri, base)| lines.write_value_key(uri, base, &mut key, scratch)) {
            Some(Ok(())) => take(Some(&key)),
            _ => take(None),
        }
    })
}

/// The key of each URI (resolved first against its base, with a second
/// input), null where the URI is null or not a URI reference.
#[polars_expr(output_type_func = strings)]
fn key(inputs: &[Series], kwargs: Kwargs) -> PolarsResult<Series> {
    let mut keys = StringChunkedBuilder::new(name(inputs), inputs[0].len());
    keys_of(inputs, &kwargs, |key| match key {
        // Canonical forms and the keys made of them are ASCII.
        Some(key) => keys.append_value(std::str::from_utf8(key).expect("keys are ASCII")),
        None => keys.append_null(),
    })?;
    Ok(keys.finish().into_series())
}

/// The 16-byte fingerprint of each URI's key (the seen store's), null
/// where there is no key.
#[polars_expr(output_type_func = binaries)]
fn key_fingerprint(inputs: &[Series], kwargs: Kwargs) -> PolarsResult<Series> {
    let mut prints = BinaryChunkedBuilder::new(name(inputs), inputs[0].len());
    keys_of(inputs, &kwargs, |key| match key {
        Some(key) => prints.append_value(fingerprint(key)),
        None => prints.append_null(),
    })?;
    Ok(prints.finish().into_series())
}

/// Why each URI has no key (the sentence `normalize` raises; `the base:
/// ...` when its base is at fault), null where it has one or is null.
#[polars_expr(output_type_func = strings)]
fn no_key_reason(inputs: &[Series], kwargs: Kwargs) -> PolarsResult<Series> {
    let strings = as_strings(inputs)?;
    let (len, rows) = rows(&strings)?;
    let mut reasons = StringChunkedBuilder::new(name(inputs), len);
    let mut key = Vec::new();
    each_row(&kwargs, rows, |lines, row, scratch| {
        key.clear();
        match row.map(|(uri, base)| (base, lines.write_value_key(uri, base, &mut key, scratch))) {
            Some((base, Err(e))) => reasons.append_value(lines.value_refusal(base, &e)),
            _ => reasons.append_null(),
        }
    })?;
    Ok(reasons.finish().into_series())
}
