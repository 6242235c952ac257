//! `history_file`: a Parquet history (`seen import`'s input) as arbitrary
//! bytes (seeds: exports of real stores, so mutations reach past the
//! footer). Written to a file, its configuration is read and it is
//! imported into a fresh store. Invariants:
//! - no panic, whatever the bytes: every failure is a `StoreError` naming
//!   the file;
//! - an import that succeeds leaves a store that verifies and holds no
//!   more keys than the rows it read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::store::{Access, Config, Store, history_config};

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("part-00000.parquet");
    std::fs::write(&file, data).unwrap();
    let files = [file.clone()];
    if let Err(error) = history_config(&files) {
        assert!(error.to_string().contains("part-00000.parquet"), "{error}");
    }
    let config = Config::new([("rung", "scheme")]);
    let mut store = Store::open(&dir.path().join("store"), &config, Access::Write { wait: false })
        .expect("a new store");
    match store.import_history(&files) {
        Ok(imported) => {
            store.verify().expect("an imported store verifies");
            assert!(store.keys() <= imported.rows);
            assert_eq!(store.keys(), imported.admitted);
        }
        Err(error) => assert!(error.to_string().contains("part-00000.parquet"), "{error}"),
    }
});
