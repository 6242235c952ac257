//! Tests of a run: joins and readers against a set, older versions read,
//! damage caught and named.

use super::*;
use crate::store::{Asked, Clock, Holding};

const CONFIG: [u8; 16] = [7; 16];
const STAMP: Stamp = Stamp(1_795_000_000);

fn write_run(path: &Path, prints: &[u128]) -> u64 {
    let mut writer = RunWriter::create(path, CONFIG, false).unwrap();
    for &p in prints {
        writer.push(entry(p, STAMP)).unwrap();
    }
    writer.finish().unwrap()
}

fn entry(print: u128, stamp: Stamp) -> Entry {
    Entry {
        print,
        stamp,
        site: NO_SITE,
    }
}

fn asked(print: u128) -> Asked {
    Asked {
        at: 0,
        print,
        holding: Holding::Absent,
    }
}

fn join(run: &Run, probes: &mut [Asked]) {
    run.join(probes, &mut Block::default(), &Clock::at(STAMP))
        .unwrap();
}

/// A spread of prints: `n` values, every third multiple of a large odd number.
fn prints(n: u64) -> Vec<u128> {
    (0..n)
        .map(|i| u128::from(i * 3) * 0x9e37_79b9_7f4a_7c15)
        .collect()
}

#[test]
fn joins_agree_with_a_set_across_block_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let held = prints(3 * BLOCK_PRINTS as u64 + 17);
    let len = write_run(&path, &held);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    let run = Run::open(&path, &CONFIG).unwrap();
    assert_eq!(run.count(), held.len() as u64);
    run.verify().unwrap();
    // Probes: every held print, the gaps between them, and both ends.
    let mut probes: Vec<Asked> = (0..held.len() as u64 * 3 + 3)
        .map(|i| asked(u128::from(i) * 0x9e37_79b9_7f4a_7c15))
        .collect();
    probes.push(asked(u128::MAX));
    join(&run, &mut probes);
    for p in &probes {
        assert_eq!(
            p.holding == Holding::Held,
            held.binary_search(&p.print).is_ok(),
            "{:x}",
            p.print
        );
    }
    // A sparse batch reads only its blocks, and finds the same.
    let mut sparse = vec![asked(held[2 * BLOCK_PRINTS + 5])];
    join(&run, &mut sparse);
    assert_eq!(sparse[0].holding, Holding::Held);
    // With the filter loaded, every answer is the same.
    let mut run = run;
    run.load_filter().unwrap();
    let mut again: Vec<Asked> = probes.iter().map(|p| asked(p.print)).collect();
    join(&run, &mut again);
    let answers = |probes: &[Asked]| probes.iter().map(|p| p.holding).collect::<Vec<_>>();
    assert_eq!(answers(&again), answers(&probes));
}

#[test]
fn a_reader_gives_every_print_once_and_equal_pushes_are_held_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let mut writer = RunWriter::create(&path, CONFIG, false).unwrap();
    for (p, s) in [(1u128, 7), (1, 8), (2, 0), (5, 9), (5, 1), (9, 3)] {
        writer.push(entry(p, Stamp(s))).unwrap();
    }
    assert!(writer.push(entry(3, STAMP)).is_err(), "out of order");
    writer.finish().unwrap();
    let run = Run::open(&path, &CONFIG).unwrap();
    let read: Vec<_> = entries(&run).iter().map(|e| (e.print, e.stamp.0)).collect();
    assert_eq!(read, [(1, 7), (2, 0), (5, 9), (9, 3)]);
}

/// A run with sites (version 5) gives each entry's site back, across
/// blocks, and a lookup finds it; one without gives none.
#[test]
fn a_run_with_sites_keeps_each_entrys_site() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let n = BLOCK_PRINTS as u128 * 2 + 5;
    let mut writer = RunWriter::create(&path, CONFIG, true).unwrap();
    for p in 0..n {
        let site = (p % 7) as u64;
        writer
            .push(Entry {
                site,
                ..entry(p * 3, STAMP)
            })
            .unwrap();
    }
    let len = writer.finish().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    let run = Run::open(&path, &CONFIG).unwrap();
    run.verify().unwrap();
    let read = entries(&run);
    assert_eq!(read.len() as u128, n);
    assert!(read.iter().all(|e| e.site == ((e.print / 3) % 7) as u64));
    write_run(&path, &[1, 2]);
    let run = Run::open(&path, &CONFIG).unwrap();
    assert!(entries(&run).iter().all(|e| e.site == NO_SITE));
}

/// A run of an older version, as that version wrote it: prints only in
/// version 1, prints then stamps per block in version 2; no filter.
fn old_run(prints: &[u128], version: u32) -> Vec<u8> {
    let mut bytes = vec![0u8; HEADER_BYTES as usize];
    let mut fence = Vec::new();
    for block in prints.chunks(BLOCK_PRINTS) {
        let mut body: Vec<u8> = block.iter().flat_map(|p| p.to_be_bytes()).collect();
        if version == 2 {
            body.extend(block.iter().flat_map(|_| STAMP.0.to_le_bytes()));
        }
        fence.extend_from_slice(&block[0].to_be_bytes());
        fence.extend_from_slice(&crc(&body).to_le_bytes());
        bytes.extend_from_slice(&body);
    }
    let fence_crc = crc(&fence);
    bytes.extend_from_slice(&fence);
    bytes.extend_from_slice(&fence_crc.to_le_bytes());
    bytes.extend_from_slice(TRAILER);
    bytes[..16].copy_from_slice(MAGIC);
    bytes[16..20].copy_from_slice(&version.to_le_bytes());
    bytes[20..24].copy_from_slice(&(BLOCK_PRINTS as u32).to_le_bytes());
    bytes[24..32].copy_from_slice(&(prints.len() as u64).to_le_bytes());
    bytes[32..48].copy_from_slice(&CONFIG);
    let header_crc = crc(&bytes[..60]);
    bytes[60..64].copy_from_slice(&header_crc.to_le_bytes());
    let count = prints.len() as u64;
    assert_eq!(
        Some(bytes.len() as u64),
        Layout { version, count }.file_len()
    );
    bytes
}

fn entries(run: &Run) -> Vec<Entry> {
    let mut reader = run.reader();
    let mut read = Vec::new();
    while let Some(entry) = reader.next_entry().unwrap() {
        read.push(entry);
    }
    read
}

/// A run of version 1 (prints only, before keys had times) is read,
/// each key stamped with the file's time.
#[test]
fn a_version_1_run_is_read_with_its_files_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let prints = prints(BLOCK_PRINTS as u64 + 3);
    std::fs::write(&path, old_run(&prints, 1)).unwrap();
    let written =
        std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(u64::from(STAMP.0) - 50);
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(written)
        .unwrap();
    let run = Run::open(&path, &CONFIG).unwrap();
    run.verify().unwrap();
    let expected: Vec<Entry> = prints
        .iter()
        .map(|&p| entry(p, Stamp(STAMP.0 - 50)))
        .collect();
    assert_eq!(entries(&run), expected);
}

/// A run of version 2 (no filter) is read, and answers lookups with its
/// filter asked for: it has none, so every lookup reads its block.
#[test]
fn a_version_2_run_is_read_without_a_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let prints = prints(BLOCK_PRINTS as u64 + 3);
    std::fs::write(&path, old_run(&prints, 2)).unwrap();
    let mut run = Run::open(&path, &CONFIG).unwrap();
    run.verify().unwrap();
    let expected: Vec<Entry> = prints.iter().map(|&p| entry(p, STAMP)).collect();
    assert_eq!(entries(&run), expected);
    run.load_filter().unwrap();
    let mut probes = [asked(prints[BLOCK_PRINTS + 1]), asked(prints[7] + 1)];
    join(&run, &mut probes);
    assert_eq!(probes.map(|p| p.holding), [Holding::Held, Holding::Absent]);
}

#[test]
fn an_empty_run_holds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    write_run(&path, &[]);
    let run = Run::open(&path, &CONFIG).unwrap();
    let mut probes = [asked(0)];
    join(&run, &mut probes);
    assert_eq!(probes[0].holding, Holding::Absent);
    run.verify().unwrap();
}

/// Every way a run can be damaged is an error naming it, never a panic.
#[test]
fn damage_is_caught_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.run");
    let len = write_run(&path, &prints(2 * BLOCK_PRINTS as u64 + 3)) as usize;
    let good = std::fs::read(&path).unwrap();
    let mut cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..len - 1].to_vec(), "cut short"),
        (good[..40].to_vec(), "no complete header"),
        ([&good[..], b"x"].concat(), "bytes long"),
    ];
    for (at, what) in [
        (3, "first bytes"),
        (30, "header whose checksum"),
        (64 + 20 * 5000 + 3, "block 1"),
        (64 + 20 * (2 * BLOCK_PRINTS + 3) + 100, "filter"),
        (len - 30, "fence"),
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x40;
        cases.push((bad, what));
    }
    for (bytes, what) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let result = Run::open(&path, &CONFIG).and_then(|run| run.verify());
        let message = result.unwrap_err().to_string();
        assert!(message.contains("r.run"), "{message}");
        assert!(message.contains(what), "{what}: {message}");
    }
    std::fs::write(&path, &good).unwrap();
    let other = Run::open(&path, &[8; 16]).unwrap_err().to_string();
    assert!(other.contains("another configuration"), "{other}");
}
