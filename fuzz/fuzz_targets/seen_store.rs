//! `seen_store`: a seen store's files as arbitrary bytes. The input is a
//! 2-byte length, that many bytes of `MANIFEST`, and the rest as the run
//! file `0000000001.run` (seeds: real stores, so mutations reach past the
//! checksums). Written to a fresh directory, the store is opened for
//! reading, verified, and asked about fingerprints; then opened for writing
//! and given a commit. Invariants:
//! - no panic, whatever the bytes: every failure is a `StoreError`;
//! - a store that verifies holds every fingerprint its run's body spells
//!   with a stamp other than 0 (read here from the bytes, as the format
//!   says: from byte 64, blocks of up to 4096 prints of 16 bytes, each
//!   block's prints followed by their 4-byte stamps from version 2, as many
//!   as the header's count), and lookups agree with them, with the runs'
//!   filters kept in memory or not;
//! - a store that opens for writing takes a commit, and then verifies and
//!   holds what it held plus what the commit added.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::store::{Access, Holding, Staging, Store};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = (usize::from(u16::from_le_bytes([data[0], data[1]])) + 2).min(data.len());
    let (manifest, run) = (&data[2..split], &data[split..]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("MANIFEST"), manifest).unwrap();
    std::fs::write(dir.path().join("0000000001.run"), run).unwrap();

    let Ok(mut store) = Store::open_existing(dir.path(), Access::ReadOnly) else {
        return;
    };
    let verified = store.verify().is_ok();
    let spelled = spelled_prints(run);
    let mut asked: Vec<u128> = spelled.clone();
    asked.extend([0, 1, u128::MAX, 0x8000_0000_0000_0000_0000_0000_0000_0000]);
    let held = store.holds(&asked);
    if verified && store.runs() == 1 {
        let held = held.expect("a verified store answers");
        assert!(held[..spelled.len()].iter().all(|&h| h == Holding::Held), "a print of the run not held");
        assert_eq!(store.keys(), spelled.len() as u64);
        store.keep_filters().expect("a verified store's filters load");
        assert_eq!(store.holds(&asked).expect("a verified store answers"), held, "filters changed an answer");
    } else if store.keep_filters().is_ok() {
        let _ = store.holds(&asked);
    }
    let config = store.config().clone();
    drop(store);

    let Ok(mut store) = Store::open(dir.path(), &config, Access::Write { wait: false }) else {
        return;
    };
    let before = store.keys();
    let mut added: Vec<u128> = (1..=3u128).map(|i| i << 100 | 0x5eed).collect();
    added.sort_unstable();
    let Ok(held) = store.holds(&added) else {
        return;
    };
    let unheld: Vec<u128> =
        added.iter().zip(held).filter(|(_, h)| *h == Holding::Absent).map(|(p, _)| *p).collect();
    let new = unheld.len() as u64;
    if store.stage(unheld.into_iter(), Staging::Admit { renewed: 0 }).is_err()
        || store.publish().is_err()
    {
        return;
    }
    if verified {
        store.verify().expect("a verified store stays verified through a commit");
        assert_eq!(store.keys(), before + new);
        assert!(store.holds(&added).unwrap().iter().all(|&h| h == Holding::Held));
    }
});

/// The fingerprints a run file's body spells with a stamp other than 0
/// (a tombstone), by the format: the version at bytes 16..20, the count at
/// 24..32, then from byte 64 blocks of up to 4096 prints (16 bytes each),
/// from version 2 each followed by the block's stamps (4 bytes each), as
/// far as the bytes go.
fn spelled_prints(run: &[u8]) -> Vec<u128> {
    let (Some(version), Some(count)) = (run.get(16..20), run.get(24..32)) else {
        return Vec::new();
    };
    let stamp_bytes = match u32::from_le_bytes(version.try_into().unwrap()) {
        1 => 0,
        _ => 4,
    };
    let mut left = u64::from_le_bytes(count.try_into().unwrap()).min(1 << 20) as usize;
    let mut body = run.get(64..).unwrap_or_default();
    let mut prints = Vec::new();
    while left > 0 && !body.is_empty() {
        let n = left.min(4096);
        let (block, rest) = body.split_at((n * (16 + stamp_bytes)).min(body.len()));
        let (block_prints, stamps) = block.split_at((n * 16).min(block.len()));
        for (i, p) in block_prints.chunks_exact(16).enumerate() {
            let stamp = stamps.get(i * stamp_bytes..i * stamp_bytes + stamp_bytes);
            if stamp_bytes == 0 || stamp.is_some_and(|s| s != [0; 4]) {
                prints.push(u128::from_be_bytes(p.try_into().unwrap()));
            }
        }
        (body, left) = (rest, left - n);
    }
    prints
}
