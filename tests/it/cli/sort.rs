//! `dedup --sort`, through the binary: the classes in byte order of their
//! keys, the same bytes as `LC_ALL=C sort -u` of the unsorted output, in
//! memory and spilled, for every `--emit` that has an order to change.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::cli::{accounted, urinorm, with_stats};

/// 300,000 lines over about 110,000 classes, spelled in ways the scheme
/// rung merges: several batches at -j1, so that a small memory limit
/// spills part of them.
fn lines() -> Vec<u8> {
    let mut text = Vec::new();
    let mut state = 1u64;
    for _ in 0..300_000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = (state >> 33) % 120_000;
        let padding = "p".repeat((k % 40) as usize);
        let line = format!(
            "HTTP://Host{}.Example:80/a/{k}/{padding}?q={}\n",
            k % 70,
            k % 7
        );
        text.extend_from_slice(line.as_bytes());
    }
    text
}

/// `LC_ALL=C sort` of `text`, with `args`.
fn c_sort(args: &[&str], text: &str) -> String {
    let mut child = Command::new("sort")
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sort runs");
    let mut stdin = child.stdin.take().unwrap();
    let text = text.as_bytes().to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&text));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

fn dedup(args: &[&str], input: &[u8]) -> String {
    accounted(&[&["dedup", "-q"], args].concat(), input)
        .0
        .stdout
}

/// The memory limits a run is tried with: none (all in memory), and one
/// that spills part of the classes.
const LIMITS: [&[&str]; 2] = [&[], &["-j", "1", "--memory-limit", "2M"]];

#[test]
fn sorted_is_sort_u_of_the_unsorted_output_in_memory_and_spilled() {
    let input = lines();
    for key in ["canonical", "surt", "host"] {
        let expected = c_sort(&["-u"], &dedup(&["--key", key], &input));
        for limit in LIMITS {
            let args = [&["--sort", "--key", key], limit].concat();
            let (run, stats) = with_stats(&[&["dedup", "-q"], &args[..]].concat(), &input);
            assert!(run.stdout == expected, "--key {key} {limit:?}");
            if !limit.is_empty() && key == "canonical" {
                let spilled = stats["spill"]["records"].as_u64().expect("a spill");
                assert!(
                    spilled > 0 && spilled < 300_000,
                    "{spilled}: not a partial spill"
                );
            }
        }
    }
}

/// More classes than the lines made at once on every thread (pieces of
/// 65,536 classes, four per thread): the pieces are written in order.
#[test]
fn many_classes_come_in_order_on_one_thread_and_on_several() {
    let mut input = Vec::new();
    for i in 0..1_200_000u64 {
        let k = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44;
        writeln!(input, "http://h{}.example/{k}", k % 13).unwrap();
    }
    let unsorted = dedup(&["--emit", "count"], &input);
    let expected = c_sort(&["-t", "\t", "-k", "2"], &unsorted);
    assert!(unsorted.lines().count() > 600_000, "enough classes");
    for threads in ["1", "2", "3"] {
        let counts = dedup(&["--sort", "--emit", "count", "-j", threads], &input);
        assert!(counts == expected, "-j {threads}");
    }
}

#[test]
fn first_lines_and_counts_come_in_their_keys_order() {
    let input = lines();
    let sorted = dedup(&["--sort"], &input);
    for limit in LIMITS {
        // The first lines, normalized, are the sorted keys: the lines are
        // in their keys' order, and each is its class's first.
        let first = dedup(&[&["--sort", "--emit", "first"], limit].concat(), &input);
        let unsorted_first = dedup(&["--emit", "first"], &input);
        assert_eq!(
            c_sort(&[], &first),
            c_sort(&[], &unsorted_first),
            "{limit:?}: the same first lines"
        );
        let run = urinorm(&["normalize", "-q"], first.as_bytes());
        assert!(run.stdout == sorted, "{limit:?}: first lines out of order");
        // Counts: the unsorted counts, sorted by key.
        let counts = dedup(&[&["--sort", "--emit", "count"], limit].concat(), &input);
        let unsorted = dedup(&["--emit", "count"], &input);
        assert!(
            counts == c_sort(&["-t", "\t", "-k", "2"], &unsorted),
            "{limit:?}"
        );
    }
}

#[test]
fn sorted_with_caps_headers_and_compressed_files() {
    let input = lines();
    let capped = dedup(&["--max-per-host", "300"], &input);
    let got = dedup(
        &[
            "--sort",
            "--max-per-host",
            "300",
            "-j",
            "1",
            "--memory-limit",
            "2M",
        ],
        &input,
    );
    assert!(got == c_sort(&["-u"], &capped), "caps");
    // A header stays first.
    let with_header = [&b"url\n"[..], &input].concat();
    let got = dedup(&["--sort", "--header"], &with_header);
    assert!(got.starts_with("url\n"));
    assert!(got["url\n".len()..] == dedup(&["--sort"], &input));
    // Read compressed, written compressed.
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&input).unwrap();
    let gz_path = dir.path().join("in.gz");
    std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
    let out = dir.path().join("out.zst");
    dedup(
        &[
            "--sort",
            gz_path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        b"",
    );
    let written = zstd::decode_all(&std::fs::read(&out).unwrap()[..]).unwrap();
    assert!(written == dedup(&["--sort"], &input).as_bytes());
}

#[test]
fn sorted_against_a_seen_store_leaves_out_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seen");
    let store = store.to_str().unwrap();
    let input = lines();
    let (first, second) = input.split_at(input.len() / 2);
    let second = &second[second.iter().position(|&b| b == b'\n').unwrap() + 1..];
    let first = [first, b"\n"].concat();
    // The first batch fills the store; the second, sorted, is the sorted
    // keys of the second batch that the first did not have.
    dedup(&["--seen", store, "--sort"], &first);
    let got = dedup(&["--seen", store, "--sort"], second);
    let first_keys: std::collections::HashSet<String> =
        dedup(&[], &first).lines().map(String::from).collect();
    let new: String = dedup(&[], second)
        .lines()
        .filter(|k| !first_keys.contains(*k))
        .map(|k| format!("{k}\n"))
        .collect();
    assert!(got == c_sort(&["-u"], &new));
    // Rerun: everything is held, nothing written.
    assert_eq!(dedup(&["--seen", store, "--sort"], second), "");
}

#[test]
fn sorting_verdicts_or_line_by_line_is_refused() {
    for args in [
        &["dedup", "--sort", "--emit", "verdict"][..],
        &["dedup", "--sort", "--line-buffered"],
    ] {
        let run = urinorm(args, b"http://a/\n");
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains("--sort"), "{}", run.stderr);
    }
}
