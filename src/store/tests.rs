use super::*;
use crate::fingerprint::fingerprint;

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
    store
        .stage(sorted.into_iter(), Staging::Admit { renewed: 0 })
        .unwrap();
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
    assert!(held[..13_000].iter().all(|&h| h == Holding::Held));
    assert!(held[13_000..].iter().all(|&h| h == Holding::Absent));
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

/// Merges left for later are the same merges, written while the store is
/// only read, then put in place; one written before another change is
/// refused.
#[test]
fn merges_left_for_later_are_written_then_installed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    let publish_unmerged = |store: &mut Store, seed| {
        let mut prints = spread(seed, 100);
        prints.sort_unstable();
        store
            .stage(prints.into_iter(), Staging::Admit { renewed: 0 })
            .unwrap();
        store.publish_unmerged().unwrap()
    };
    publish_unmerged(&mut store, 1);
    assert!(store.write_due_merge().unwrap().is_none());
    assert_eq!(publish_unmerged(&mut store, 2).runs, 2);
    let written = store
        .write_due_merge()
        .unwrap()
        .expect("two runs of one size");
    // Lookups meanwhile see both runs.
    assert!(
        store
            .holds(&spread(2, 100))
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Held)
    );
    store.install_merge(written).unwrap();
    assert_eq!((store.runs(), store.keys()), (1, 200));
    assert!(store.write_due_merge().unwrap().is_none());
    store.verify().unwrap();

    publish_unmerged(&mut store, 3);
    publish_unmerged(&mut store, 4);
    let stale = store.write_due_merge().unwrap().expect("due");
    publish_unmerged(&mut store, 5);
    assert!(
        store.install_merge(stale).is_err(),
        "the store changed since"
    );
    while let Some(written) = store.write_due_merge().unwrap() {
        store.install_merge(written).unwrap();
    }
    assert_eq!(store.keys(), 500);
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
        // Only what differs, with both values.
        assert!(
            e.contains("(rung: the store's scheme, this run's syntax)"),
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
    assert_eq!(
        reader.holds(&spread(1, 100)).unwrap(),
        vec![Holding::Held; 100]
    );
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
        reader.stage([1].into_iter(), Staging::Admit { renewed: 0 }),
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
    // A file is named as one, not "File exists (os error 17)".
    let file = dir.path().join("notes.txt");
    let e = Store::open(&file, &config(), Access::Write { wait: false }).unwrap_err();
    assert!(
        e.to_string().contains("is not a seen store: it is a file"),
        "{e}"
    );
}

#[test]
fn what_a_killed_writer_left_is_removed_by_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    commit(&mut store, &spread(1, 50));
    // Staged and never published, as if killed before the manifest's rename.
    store
        .stage([1u128, 2].into_iter(), Staging::Admit { renewed: 0 })
        .unwrap();
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

#[test]
fn damage_found_by_one_reader_fails_every_later_one_until_the_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let prints = spread(1, 10_000);
    commit(&mut writer(dir.path()), &prints);
    let run = dir.path().join("0000000001.run");
    let good = std::fs::read(&run).unwrap();
    let mut bad = good.clone();
    // Block 2's prints, the last block.
    bad[64 + 20 * 2 * 4096 + 16] ^= 1;
    std::fs::write(&run, &bad).unwrap();
    let mut sorted = prints.clone();
    sorted.sort_unstable();
    let in_block_0 = &sorted[..10];
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    // Before anyone found it, a lookup that reads only sound blocks is right.
    assert!(
        store
            .holds(in_block_0)
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Held)
    );
    let found = store.verify().unwrap_err().to_string();
    drop(store);
    for access in [Access::ReadOnly, Access::Write { wait: false }] {
        let e = Store::open(dir.path(), &config(), access).unwrap_err();
        assert_eq!(e.to_string(), found);
    }
    // A file put in its place (a backup) is judged afresh.
    let backup = dir.path().join("backup");
    std::fs::write(&backup, &good).unwrap();
    std::fs::rename(&backup, &run).unwrap();
    let store = writer(dir.path());
    store.verify().unwrap();
    assert!(
        !dir.path().join(damage::FILE).exists(),
        "a stale mark is removed"
    );
    // Salvage of a damaged store keeps the sound blocks' keys.
    drop(store);
    std::fs::write(&run, &bad).unwrap();
    let salvaged = Store::salvage(dir.path(), false).unwrap();
    assert_eq!(salvaged.blocks_lost, 1);
    assert_eq!(salvaged.entries_lost, 10_000 - 2 * 4096);
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    store.verify().unwrap();
    assert_eq!(store.keys(), 2 * 4096);
    let held = store.holds(&sorted).unwrap();
    assert!(held[..2 * 4096].iter().all(|&h| h == Holding::Held));
    assert!(held[2 * 4096..].iter().all(|&h| h == Holding::Absent));
}

const DAY: u32 = 86_400;

/// The clock at `day` days after a fixed start, with keys older than
/// `max_days` days expired.
fn clock(day: u32, max_days: Option<u64>) -> Clock {
    let clock = Clock::at(Stamp(1_790_000_000 + day * DAY));
    max_days.map_or(clock, |d| {
        clock.with_max_age(std::time::Duration::from_secs(d * u64::from(DAY)))
    })
}

/// Commits `prints` as a batch would: the store's answers first, then
/// what it does not hold (expired ones again); returns what it said.
fn admit(store: &mut Store, prints: &[u128]) -> Vec<Holding> {
    let held = store.holds(prints).unwrap();
    let mut unheld: Vec<u128> = prints
        .iter()
        .zip(&held)
        .filter(|(_, h)| **h != Holding::Held)
        .map(|(p, _)| *p)
        .collect();
    unheld.sort_unstable();
    let renewed = held.iter().filter(|h| **h == Holding::Expired).count() as u64;
    store
        .stage(unheld.into_iter(), Staging::Admit { renewed })
        .unwrap();
    store.publish().unwrap();
    held
}

fn forget(store: &mut Store, prints: &[u128]) -> Committed {
    let mut sorted = prints.to_vec();
    sorted.sort_unstable();
    store.stage(sorted.into_iter(), Staging::Forget).unwrap();
    store.publish().unwrap()
}

#[test]
fn keys_older_than_the_maximum_age_expire_and_come_back_with_the_new_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    let (first, second) = (spread(1, 5_000), spread(2, 3_000));
    store.set_clock(clock(0, Some(7)));
    admit(&mut store, &first);
    store.set_clock(clock(5, Some(7)));
    admit(&mut store, &second);
    // Ten days on: the first batch expired, the second (5 days old) held.
    store.set_clock(clock(10, Some(7)));
    let both = [&first[..], &second[..]].concat();
    let said = admit(&mut store, &both);
    assert!(said[..5_000].iter().all(|&h| h == Holding::Expired));
    assert!(said[5_000..].iter().all(|&h| h == Holding::Held));
    assert_eq!(store.keys(), 8_000, "admitted again, counted once");
    store.verify().unwrap();
    // Admitted again at day 10: held at day 16, the second batch not.
    store.set_clock(clock(16, Some(7)));
    let said = store.holds(&both).unwrap();
    assert!(said[..5_000].iter().all(|&h| h == Holding::Held));
    assert!(said[5_000..].iter().all(|&h| h == Holding::Expired));
    // Without a maximum age every key is held, however old.
    store.set_clock(clock(400, None));
    assert!(
        store
            .holds(&both)
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Held)
    );
    assert_eq!(store.compact().unwrap().keys, 8_000);
    store.verify().unwrap();
}

#[test]
fn expire_removes_exactly_the_keys_admitted_before_the_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    for day in 0..6 {
        store.set_clock(clock(day, None));
        admit(&mut store, &spread(u64::from(day), 1_000));
    }
    // Day 0's keys admitted again on day 4: they are as old as day 4's.
    store.set_clock(clock(4, Some(1)));
    admit(&mut store, &spread(0, 1_000));
    assert_eq!(store.keys(), 6_000);
    let ages = store
        .ages(&[clock(5, None).now(), clock(3, None).now()])
        .unwrap();
    assert_eq!(
        ages,
        [1_000, 3_000, 2_000],
        "day 5; days 3-4 with day 0; 1-2"
    );
    let expired = store.expire(clock(3, None).now()).unwrap();
    assert_eq!(expired.forgotten, 2_000, "days 1 and 2");
    assert_eq!((store.keys(), store.runs()), (4_000, 1));
    store.verify().unwrap();
    let held = store.holds(&spread(1, 1_000)).unwrap();
    assert!(held.iter().all(|&h| h == Holding::Absent));
    let held = store.holds(&spread(0, 1_000)).unwrap();
    assert!(held.iter().all(|&h| h == Holding::Held));
}

#[test]
fn forgotten_keys_are_not_held_and_merges_keep_their_tombstones_while_needed() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    let (old, new) = (spread(1, 4_000), spread(2, 1_000));
    commit(&mut store, &old);
    commit(&mut store, &new);
    let gone = [&old[..100], &new[..50]].concat();
    let forgotten = forget(&mut store, &gone);
    assert_eq!((forgotten.forgotten, forgotten.keys), (150, 4_850));
    store.verify().unwrap();
    let held = store.holds(&gone).unwrap();
    assert!(held.iter().all(|&h| h == Holding::Absent));
    assert_eq!(store.holds(&old[100..]).unwrap()[0], Holding::Held);
    // Small batches after: the tombstone run merges with newer runs only,
    // so it must still hide the keys of the oldest run.
    for seed in 10..14 {
        commit(&mut store, &spread(seed, 10));
    }
    assert!(store.runs() > 1);
    assert!(
        store
            .holds(&gone)
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Absent)
    );
    store.verify().unwrap();
    // Admitted again after being forgotten: new, and held.
    let said = admit(&mut store, &gone[..10]);
    assert!(said.iter().all(|&h| h == Holding::Absent));
    assert_eq!(store.keys(), 4_850 + 40 + 10);
    // A merge from the oldest run drops the tombstones with what they hid.
    store.compact().unwrap();
    assert_eq!(store.keys(), 4_900);
    store.verify().unwrap();
    let entries: u64 = store.manifest.runs.iter().map(|r| r.entries).sum();
    assert_eq!(entries, 4_900, "no tombstone left");
    assert!(
        store
            .holds(&gone[10..])
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Absent)
    );
}

#[test]
fn a_manifest_that_miscounts_its_runs_fails_verification() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = writer(dir.path());
    commit(&mut store, &spread(1, 100));
    let mut manifest = store.manifest.clone();
    manifest.runs[0].adds = 99;
    manifest.write(dir.path()).unwrap();
    let reader = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    let e = reader.verify().unwrap_err().to_string();
    assert!(e.contains("counts 99 keys where its runs hold 100"), "{e}");
}

/// A run cut short (a full disk, a partial copy) keeps every block left
/// whole in the file: cut by 2 %, it loses its filter and fence only; cut
/// in its second block, it keeps the first. Salvage says how many entries
/// of which run it kept and lost.
#[test]
fn salvage_keeps_the_whole_blocks_of_a_run_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let mut prints = spread(2, 100_000);
    commit(&mut writer(dir.path()), &prints);
    prints.sort_unstable();
    let run = dir.path().join("0000000001.run");
    let len = std::fs::metadata(&run).unwrap().len();
    let cut = |to: u64| {
        std::fs::File::options()
            .write(true)
            .open(&run)
            .unwrap()
            .set_len(to)
            .unwrap()
    };
    cut(len - len / 50);
    let e = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap_err();
    assert!(e.to_string().contains("cut short"), "{e}");
    let salvaged = Store::salvage(dir.path(), false).unwrap();
    assert_eq!((salvaged.keys, salvaged.entries_lost), (100_000, 0));
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    store.verify().unwrap();
    assert!(
        store
            .holds(&prints)
            .unwrap()
            .iter()
            .all(|&h| h == Holding::Held)
    );
    drop(store);

    // The salvaged store's one run, cut inside its second block.
    let run = dir.path().join("0000000002.run");
    std::fs::File::options()
        .write(true)
        .open(&run)
        .unwrap()
        .set_len(64 + (20 * 4096 + 4) + 1000)
        .unwrap();
    let salvaged = Store::salvage(dir.path(), false).unwrap();
    assert_eq!(salvaged.keys, 4096);
    assert_eq!(salvaged.entries_lost, 100_000 - 4096);
    assert_eq!(
        salvaged.damaged_runs,
        [RunSalvaged {
            file: "0000000002.run".into(),
            kept: 4096,
            lost: 100_000 - 4096
        }]
    );
    assert!(
        salvaged.damage.iter().any(|d| d.contains("cut short")),
        "{:?}",
        salvaged.damage
    );
    let store = Store::open(dir.path(), &config(), Access::ReadOnly).unwrap();
    store.verify().unwrap();
    let held = store.holds(&prints).unwrap();
    assert!(held[..4096].iter().all(|&h| h == Holding::Held));
    assert!(held[4096..].iter().all(|&h| h == Holding::Absent));
}
