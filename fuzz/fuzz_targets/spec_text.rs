//! `spec_text`: arbitrary text → the options' text form
//! (`NormalizerSpec::from_str`, what DuckDB's functions and Spark take from
//! a user). It never panics; text it accepts is written back by `Display`
//! as text that parses to the same options, and written the same again.
//! No file is read: the rules and tracking files named stay names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::line::spec::NormalizerSpec;

fuzz_target!(|text: &str| {
    let Ok(spec) = text.parse::<NormalizerSpec>() else {
        return;
    };
    let written = spec.to_string();
    let again: NormalizerSpec = written.parse().expect("Display writes the text form");
    assert_eq!(again, spec, "{text:?} → {written:?}");
    assert_eq!(again.to_string(), written);
});
