use super::*;

fn config() -> Config {
    Config::new([("rung", "scheme"), ("key", "canonical")])
}

fn writer(dir: &Path) -> Store {
    Store::open(dir, &config(), Access::Write { wait: false }).unwrap()
}

/// Commits `prints` (any order) as one batch of new keys.
fn commit(store: &mut Store, prints: &[u128]) -> Committed {
    let mut sorted = prints.to_vec();
    sorted.sort_unstable();
    store.stage(sorted.into_iter()).unwrap();
    store.publish().unwrap()
}

/// Prints spread over the whole range, from a seed.
fn spread(seed: u64, n: usize) -> Vec<u128> {
    (0..n as u64)
        .map(|i| u128::from_be_bytes(fingerprint(format!("{seed}/{i}").as_bytes())))
        .collect()
}

#[test]
fn holds_what_was_committed_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let first = spread(1, 10_000);
    let second = spread(2, 3_000);
    let mut store = writer(dir.path());
    commit(&mut store, &first);
    let committed = commit(&mut store, &second);
    assert_eq!(committed.keys, 13_000);
    drop(store);
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    assert_eq!(store.keys(), 13_000);
    assert_eq!(store.last_commit().0, 2);
    let all: Vec<u128> = [&first[..], &second[..], &spread(3, 5_000)].concat();
    let held = store.holds(&all).unwrap();
    assert!(held[..13_000].iter().all(|&h| h));
    assert!(held[13_000..].iter().all(|&h| !h));
    store.verify().unwrap();
}

#[test]
fn runs_merge_like_a_binary_counter() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    let mut runs = Vec::new();
    for batch in 0..8 {
        runs.push(commit(&mut store, &spread(batch, 100)).runs);
    }
    // 1, 2 → 1 merged, 3 → 2, 4 → 1, ...: the bits of the batch count.
    assert_eq!(runs, [1, 1, 2, 1, 2, 2, 3, 1]);
    assert_eq!(store.keys(), 800);
    let files: Vec<String> = dir_names(dir.path())
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".run"))
        .collect();
    assert_eq!(files.len(), 1, "merged runs are removed: {files:?}");
    // A small batch after a large one is not merged into it.
    assert_eq!(commit(&mut store, &spread(99, 10)).runs, 2);
    assert_eq!(store.compact().unwrap().runs, 1);
    assert_eq!(store.keys(), 810);
    store.verify().unwrap();
}

#[test]
fn a_store_of_another_configuration_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    commit(&mut writer(dir.path()), &spread(1, 10));
    let other = Config::new([("rung", "syntax"), ("key", "canonical")]);
    for access in [Access::ReadOnly, Access::Write { wait: false }] {
        let e = Store::open(dir.path(), &other, access)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rung=scheme") && e.contains("rung=syntax"),
            "{e}"
        );
    }
}

#[test]
fn a_second_writer_is_refused_but_a_reader_reads_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    commit(&mut store, &spread(1, 100));
    let e = Store::open(dir.path(), &config(), Access::Write { wait: false }).unwrap_err();
    assert!(
        matches!(
            e,
            StoreError::Locked {
                holder: Some(_),
                ..
            }
        ),
        "{e}"
    );
    let reader = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    // The writer merges the reader's run away; the reader still reads it.
    commit(&mut store, &spread(2, 100));
    assert_eq!(store.runs(), 1);
    assert_eq!(reader.holds(&spread(1, 100)).unwrap(), vec![true; 100]);
    assert_eq!(reader.keys(), 100);
    assert!(!reader.is_writable());
}

#[test]
fn a_reader_cannot_commit_and_a_missing_store_is_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    let e = Store::open(&missing, &config(), Access::ReadOnly).unwrap_err();
    assert!(e.to_string().contains("there is no seen store"), "{e}");
    writer(&missing);
    let mut reader = Store::open(&missing, &config(), Access::ReadOnly).unwrap();
    assert!(matches!(
        reader.stage([1].into_iter()),
        Err(StoreError::ReadOnly { .. })
    ));
}

#[test]
fn a_directory_of_other_files_is_not_made_a_store() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let e = Store::open(dir.path(), &config(), Access::Write { wait: false }).unwrap_err();
    assert!(e.to_string().contains("notes.txt"), "{e}");
    assert_eq!(dir_names(dir.path()).unwrap(), ["notes.txt"]);
}

#[test]
fn what_a_killed_writer_left_is_removed_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    commit(&mut store, &spread(1, 50));
    // Staged and never published, as if killed before the manifest's rename.
    store.stage([1u128, 2].into_iter()).unwrap();
    drop(store);
    for stray in ["0000000077.run", "MANIFEST.tmp", "0000000078.run.tmp"] {
        std::fs::write(dir.path().join(stray), "x").unwrap();
    }
    let store = writer(dir.path());
    assert_eq!(store.keys(), 50);
    let mut names = dir_names(dir.path()).unwrap();
    names.sort();
    assert_eq!(names, ["0000000001.run", "LOCK", "MANIFEST"]);
}

#[test]
fn a_missing_or_damaged_run_is_an_error_never_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    commit(&mut writer(dir.path()), &spread(1, 10_000));
    let run = dir.path().join("0000000001.run");
    let good = std::fs::read(&run).unwrap();
    let mut bad = good.clone();
    bad[64 + 16 * 100] ^= 1;
    std::fs::write(&run, &bad).unwrap();
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    let e = store.verify().unwrap_err().to_string();
    assert!(
        e.contains("0000000001.run") && e.contains("checksum"),
        "{e}"
    );
    let e = store.holds(&spread(1, 10_000)).unwrap_err().to_string();
    assert!(e.contains("0000000001.run"), "{e}");
    std::fs::remove_file(&run).unwrap();
    let e = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap_err();
    assert!(e.to_string().contains("is missing"), "{e}");
}
