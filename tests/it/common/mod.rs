//! Helpers shared by the integration tests: reading the vector files in `testdata/`.
#![allow(dead_code)]

pub mod cli;
pub mod grammar;
pub mod server;

use std::path::PathBuf;

/// The path of a file under `testdata/`.
pub fn testdata(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(path)
}

/// The rows of a tab-separated vector file, without `#` comments and the header.
pub fn tsv_rows(path: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(testdata(path)).expect("vector file in testdata/");
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .skip(1)
        .map(|line| line.split('\t').map(str::to_string).collect())
        .collect()
}

/// A JSON vector file.
pub fn json(path: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(testdata(path)).expect("vector file in testdata/");
    serde_json::from_str(&text).expect("valid JSON")
}
