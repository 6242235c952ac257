//! A function bound to its options: the options text read into the
//! library's model ([`NormalizerSpec`]) and the line mapper it makes, with
//! what each function adds (`urinorm_surt`'s key, `urinorm_resolve`'s
//! `non_strict`). It knows option texts and keys; not DuckDB's vectors.

use std::sync::atomic::{AtomicBool, Ordering};

use urinorm::line::key::KeyFormat;
use urinorm::line::spec::{NormalizerSpec, SpecError};
use urinorm::line::{KeyScratch, NormalizeLines};

use crate::kind::Kind;

/// Set at load when `URINORM_DUCKDB_TEST_PANIC` is in the environment: the
/// option `test_panic=bind` (or `=row`) then panics there, so that tests
/// can see a panic become the query's error.
pub(crate) static TEST_PANIC: AtomicBool = AtomicBool::new(false);

/// How a row becomes its value: the line mapper of the options (the
/// normalizer, which key, how the value is read, what it takes), and
/// whether the key is fingerprinted.
pub(crate) struct BoundFunction {
    pub(crate) kind: Kind,
    lines: NormalizeLines,
    /// `test_panic=row` (tests only).
    panic_in_rows: bool,
}

impl BoundFunction {
    /// Appends the key of `value` (resolved against `base` when there is
    /// one) to `out`; false (nothing appended) when it has none.
    pub(crate) fn write(
        &self,
        value: &[u8],
        base: Option<&[u8]>,
        out: &mut Vec<u8>,
        scratch: &mut KeyScratch,
    ) -> bool {
        if self.panic_in_rows {
            panic!("test_panic=row");
        }
        self.lines
            .write_value_key(value, base, out, scratch)
            .is_ok()
    }

    /// The options of `text`, in the library's text form ([`NormalizerSpec`]:
    /// `name=value` pairs separated by `;`, lists separated by `,`), the
    /// names of the batch functions' keyword arguments. The function adds
    /// its own: `urinorm_surt`'s key is a SURT (it takes no `key`), and only
    /// `urinorm_resolve` reads `non_strict`. Every other meaning and refusal
    /// is the model's.
    pub(crate) fn parse(kind: Kind, text: &str) -> Result<BoundFunction, String> {
        let function = kind.text();
        let in_function = |e: SpecError| format!("{function}: {e}");
        let (text, panic_in_rows) = test_panic(text);
        let mut spec: NormalizerSpec = text.parse().map_err(in_function)?;
        match kind {
            Kind::Surt if spec.key != KeyFormat::Canonical => {
                return Err(format!(
                    "{function}: takes no key option: its key is a SURT (use urinorm_normalize with key={})",
                    spec.key.name()
                ));
            }
            Kind::Surt => spec.key = KeyFormat::Surt,
            Kind::Resolve => {}
            _ if spec.non_strict => {
                return Err(format!(
                    "{function}: non_strict is urinorm_resolve's option"
                ));
            }
            _ => {}
        }
        let normalizer = spec.normalizer().map_err(in_function)?;
        Ok(BoundFunction {
            kind,
            lines: NormalizeLines::of_values(&spec, normalizer),
            panic_in_rows,
        })
    }
}

/// `text` without its `test_panic=bind` or `test_panic=row` option (tests
/// only: set when `URINORM_DUCKDB_TEST_PANIC` was in the environment at
/// load), which panics here (`bind`) or says rows should.
fn test_panic(text: &str) -> (String, bool) {
    if !TEST_PANIC.load(Ordering::Relaxed) {
        return (text.to_string(), false);
    }
    let mut in_rows = false;
    let kept: Vec<&str> = (text.split(';'))
        .filter(|pair| match pair.trim() {
            "test_panic=bind" => panic!("test_panic=bind"),
            "test_panic=row" => {
                in_rows = true;
                false
            }
            _ => true,
        })
        .collect();
    (kept.join(";"), in_rows)
}
