//! Compressed inputs and outputs, through the binary: gzip (multi-member),
//! zstd and bzip2 read by their first bytes from files and standard input,
//! giving the same bytes as the plain file; `-o` compressed by its name or
//! `--compress`; damaged inputs stopping the run with exit 2, naming the
//! file and the byte.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::common::cli::{accounted, urinorm};

/// The shipped sample, then again with every line changed in a way the
/// scheme rung undoes (so there are duplicates), then a third time with
/// new paths: about 1 MB, more than one chunk of blocks when read with
/// small blocks, and lines of every kind the sample has (rejected ones too).
fn sample() -> Vec<u8> {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/sample/urls.txt"
    ))
    .expect("the sample");
    let mut all = text.clone();
    for line in text.split(|&b| b == b'\n') {
        all.extend(
            line.to_ascii_uppercase()
                .iter()
                .take(8)
                .chain(&line[8.min(line.len())..]),
        );
        all.push(b'\n');
    }
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        all.extend_from_slice(line);
        all.extend_from_slice(format!("/more/{i}\n\n").as_bytes());
    }
    all.extend_from_slice(b"http://example.com/last-line-without-newline");
    all
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// With a checksum, as the zstd tool writes by default (without one, a
/// flipped byte may decode to other bytes, and nothing can tell).
fn zstd(bytes: &[u8]) -> Vec<u8> {
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    e.include_checksum(true).unwrap();
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A file named `name` in `dir` holding `bytes`.
fn file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn run_ok(args: &[&str], stdin: &[u8]) -> String {
    accounted(args, stdin).0.stdout
}

#[test]
fn every_format_reads_as_the_plain_file_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let plain = file(dir.path(), "plain.txt", &text);
    let plain = plain.to_str().unwrap();
    let formats = [
        ("gz", gzip(&text)),
        ("zst", zstd(&text)),
        ("bz2", bzip2(&text)),
    ];
    let modes: [&[&str]; 6] = [
        &["normalize", "-q"],
        &["normalize", "-q", "--aligned"],
        &["dedup", "-q", "--emit", "canonical"],
        &["dedup", "-q", "--emit", "first", "-j", "1"],
        &["dedup", "-q", "--emit", "count"],
        &["dedup", "-q", "--emit", "verdict"],
    ];
    for mode in modes {
        let expected = run_ok(&[mode, &[plain]].concat(), b"");
        assert!(expected.lines().count() > 9_000, "{mode:?}");
        for (extension, compressed) in &formats {
            let path = file(dir.path(), &format!("urls.{extension}"), compressed);
            let got = run_ok(&[mode, &[path.to_str().unwrap()]].concat(), b"");
            assert!(got == expected, "{mode:?} of .{extension} differs");
            let got = run_ok(mode, compressed);
            assert!(got == expected, "{mode:?} of .{extension} on stdin differs");
        }
    }
}

#[test]
fn spilled_dedup_of_a_compressed_file_is_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let plain = file(dir.path(), "plain.txt", &text);
    let gz = file(dir.path(), "urls.gz", &gzip(&text));
    let args = ["dedup", "-q", "--memory-limit", "64K", "--temp-dir"];
    let temp = dir.path().to_str().unwrap();
    let expected = run_ok(&[&args[..], &[temp, plain.to_str().unwrap()]].concat(), b"");
    let got = run_ok(&[&args[..], &[temp, gz.to_str().unwrap()]].concat(), b"");
    assert!(got == expected);
}

/// As zcat: bytes after the last member are ignored with a word, every
/// member's lines written; damage inside a later member keeps the lines
/// decoded before it. Exit 2 either way: the input was not all it seemed.
#[test]
fn what_comes_before_damage_or_trailing_bytes_is_written() {
    let text = sample();
    let (first, second) = text.split_at(text.len() / 3);
    let first = &first[..=first.iter().rposition(|&b| b == b'\n').unwrap()];
    let members = [gzip(first), gzip(second)].concat();
    let all = run_ok(&["normalize", "-q"], &members);
    let zeros = [&members[..], &[0u8; 100]].concat();
    let run = urinorm(&["normalize", "-q"], &zeros);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stdout == all, "every member's lines are written");
    assert_eq!(
        run.stderr,
        format!(
            "urinorm: '<stdin>' has 100 bytes after its last gzip member, from byte {}, that are not gzip data: every line before them was read, the bytes were ignored\n",
            members.len()
        )
    );
    // Cut inside the second member: the first member's lines are written.
    let cut = &members[..gzip(first).len() + 20];
    let run = urinorm(&["normalize", "-q"], cut);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("cut short"), "{}", run.stderr);
    let first_only = run_ok(&["normalize", "-q"], first);
    assert!(run.stdout == first_only, "the first member's lines");
}

#[test]
fn a_multi_member_gzip_is_read_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let (first, second) = text.split_at(text.len() / 3);
    let members = [gzip(first), gzip(second), gzip(b"")].concat();
    let path = file(dir.path(), "members.gz", &members);
    let expected = run_ok(&["normalize", "-q"], &text);
    assert!(run_ok(&["normalize", "-q", path.to_str().unwrap()], b"") == expected);
    // zstd frames and bzip2 streams back to back, likewise.
    let frames = [zstd(first), zstd(second)].concat();
    assert!(run_ok(&["normalize", "-q"], &frames) == expected);
    let streams = [bzip2(first), bzip2(second)].concat();
    assert!(run_ok(&["normalize", "-q"], &streams) == expected);
}

#[test]
fn the_format_is_told_by_the_bytes_not_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let text = b"http://A/\nhttp://a:80/b\n";
    let zstd_named_txt = file(dir.path(), "urls.txt", &zstd(text));
    let plain_named_gz = file(dir.path(), "urls.gz", text);
    let expected = "http://a/\nhttp://a/b\n";
    for path in [zstd_named_txt, plain_named_gz] {
        let got = run_ok(&["normalize", "-q", path.to_str().unwrap()], b"");
        assert_eq!(got, expected, "{}", path.display());
    }
    // A line that begins like bzip2's magic number is a line.
    assert_eq!(run_ok(&["normalize", "-q"], b"BZh9\n"), "BZh9\n");
    // Empty compressed input: no lines.
    let run = urinorm(&["dedup"], &gzip(b""));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert!(run.stderr.contains("0 lines read"), "{}", run.stderr);
}

#[test]
fn line_buffered_reads_compressed_standard_input() {
    let text = sample();
    let expected = run_ok(&["dedup", "-q", "--emit", "verdict"], &text);
    let got = run_ok(
        &["dedup", "-q", "--emit", "verdict", "--line-buffered"],
        &gzip(&text),
    );
    assert!(got == expected);
}

/// An output of many compressed blocks (each a gzip member or zstd frame
/// of its own, compressed on threads) is the plain output,
/// to the format's own decoder and to urinorm, on any number of threads.
#[test]
fn an_output_of_many_blocks_is_the_plain_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    for i in 0..450_000 {
        writeln!(text, "HTTP://Host{}.Example.COM:80/a/./p{i}?q={i}", i % 300).unwrap();
    }
    let input = dir.path().join("in.txt");
    std::fs::write(&input, &text).unwrap();
    let input = input.to_str().unwrap();
    let expected = run_ok(&["dedup", "-q", input], b"");
    assert!(
        expected.len() > 16 << 20,
        "more than two blocks of any format"
    );
    for (extension, threads) in [("gz", "2"), ("gz", "1"), ("zst", "2")] {
        let out = dir.path().join(format!("out.{extension}"));
        let out = out.to_str().unwrap();
        run_ok(&["dedup", "-q", "-j", threads, "-o", out, input], b"");
        let written = std::fs::read(out).unwrap();
        let decoded = match extension {
            "gz" => {
                let mut decoded = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::MultiGzDecoder::new(&written[..]),
                    &mut decoded,
                )
                .unwrap();
                decoded
            }
            _ => zstd::decode_all(&written[..]).unwrap(),
        };
        assert!(decoded == expected.as_bytes(), ".{extension} on {threads}");
        assert!(run_ok(&["dedup", "-q", out], b"") == expected, "read back");
    }
}

#[test]
fn a_compression_level_is_the_formats_own_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let expected = run_ok(&["dedup", "-q"], &text);
    let size_at = |extension: &str, level: &str| {
        let out = dir.path().join(format!("out-{level}.{extension}"));
        let out = out.to_str().unwrap();
        run_ok(
            &["dedup", "-q", "--compress-level", level, "-o", out],
            &text,
        );
        assert!(
            run_ok(&["dedup", "-q", out], b"") == expected,
            ".{extension} -{level}"
        );
        std::fs::metadata(out).unwrap().len()
    };
    assert!(size_at("gz", "1") > size_at("gz", "9"));
    assert!(size_at("zst", "1") > size_at("zst", "19"));
    assert!(size_at("bz2", "1") >= size_at("bz2", "9"));
    let refused = [
        (
            &["--compress-level", "3"][..],
            "--compress-level needs a compressed output",
        ),
        (
            &["--compress", "gzip", "--compress-level", "10"],
            "gzip has levels 1 to 9, not 10",
        ),
        (
            &["--compress", "zstd", "--compress-level", "0"],
            "zstd has levels 1 to 19, not 0",
        ),
    ];
    for (args, sentence) in refused {
        let run = urinorm(&[&["dedup", "-q"], args].concat(), b"http://a/\n");
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains(sentence), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: wrote before refusing");
    }
}

#[test]
fn the_output_is_compressed_by_its_name_or_by_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let expected = run_ok(&["dedup", "-q"], &text);
    let decoders: [(&str, Decode); 3] = [
        ("gz", |b| {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(b), &mut out)
                .unwrap();
            out
        }),
        ("zst", |b| zstd::decode_all(b).unwrap()),
        ("bz2", |b| {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut bzip2::read::MultiBzDecoder::new(b), &mut out).unwrap();
            out
        }),
    ];
    for (extension, decode) in decoders {
        let out = dir.path().join(format!("out.{extension}"));
        run_ok(&["dedup", "-q", "-o", out.to_str().unwrap()], &text);
        let written = std::fs::read(&out).unwrap();
        assert!(decode(&written) == expected.as_bytes(), ".{extension}");
        // What urinorm writes, it reads.
        let again = run_ok(&["dedup", "-q", out.to_str().unwrap()], b"");
        assert!(again == expected, ".{extension} read back");
    }
    // --compress overrides the name, both ways, and applies to stdout.
    let named_gz = dir.path().join("plain.gz");
    run_ok(
        &[
            "dedup",
            "-q",
            "--compress",
            "none",
            "-o",
            named_gz.to_str().unwrap(),
        ],
        &text,
    );
    assert!(std::fs::read(&named_gz).unwrap() == expected.as_bytes());
    let named_txt = dir.path().join("out.txt");
    run_ok(
        &[
            "dedup",
            "-q",
            "--compress",
            "zstd",
            "-o",
            named_txt.to_str().unwrap(),
        ],
        &text,
    );
    assert!(
        zstd::decode_all(&std::fs::read(&named_txt).unwrap()[..]).unwrap() == expected.as_bytes()
    );
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .args([
            "normalize",
            "-q",
            "--compress",
            "gzip",
            named_gz.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(run.stdout.starts_with(&[0x1f, 0x8b]));
}

/// A decompressor, for what urinorm wrote.
type Decode = fn(&[u8]) -> Vec<u8>;

/// Each kind of damage: the run stops with exit 2 and one sentence naming
/// the file and the byte, `-o` is not put in place, and no summary says
/// the run completed.
#[test]
fn damaged_input_stops_the_run_naming_the_file_and_byte() {
    let dir = tempfile::tempdir().unwrap();
    let text = sample();
    let gz = gzip(&text);
    let zst = zstd(&text);
    let bz2 = bzip2(&text);
    let flipped = |bytes: &[u8], at: usize| {
        let mut bytes = bytes.to_vec();
        bytes[at] ^= 0x55;
        bytes
    };
    let half = |bytes: &[u8]| bytes[..bytes.len() / 2].to_vec();
    let garbage = |bytes: &[u8]| [bytes, b"not a member\n"].concat();
    // (name, bytes, what the message must say)
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "cut.gz",
            half(&gz),
            format!("gzip data is cut short at byte {}", gz.len() / 2),
        ),
        (
            "cut.zst",
            half(&zst),
            format!("zstd data is cut short at byte {}", zst.len() / 2),
        ),
        (
            "cut.bz2",
            half(&bz2),
            format!("bzip2 data is cut short at byte {}", bz2.len() / 2),
        ),
        (
            "crc.gz",
            flipped(&gz, gz.len() - 6),
            "gzip data stops decoding near byte".into(),
        ),
        (
            "mid.gz",
            flipped(&gz, gz.len() / 2),
            "gzip data stops decoding near byte".into(),
        ),
        (
            "mid.zst",
            flipped(&zst, zst.len() / 2),
            "zstd data stops decoding near byte".into(),
        ),
        (
            "mid.bz2",
            flipped(&bz2, bz2.len() / 2),
            "bzip2 data stops decoding near byte".into(),
        ),
        (
            "tail.gz",
            garbage(&gz),
            format!(
                "has 13 bytes after its last gzip member, from byte {}, that are not gzip data",
                gz.len()
            ),
        ),
        (
            "tail.zst",
            garbage(&zst),
            format!(
                "has 13 bytes after its last zstd member, from byte {}",
                zst.len()
            ),
        ),
        (
            "tail.bz2",
            garbage(&bz2),
            format!(
                "has 13 bytes after its last bzip2 member, from byte {}",
                bz2.len()
            ),
        ),
    ];
    for (name, bytes, says) in cases {
        let path = file(dir.path(), name, &bytes);
        let out = dir.path().join("out.txt");
        for args in [
            vec!["dedup", path.to_str().unwrap(), "-o", out.to_str().unwrap()],
            vec!["normalize", "-", "-o", out.to_str().unwrap()],
        ] {
            let stdin = if args[1] == "-" { &bytes[..] } else { b"" };
            // Quiet: the lines read before the damage are processed, and
            // their rejects would be shown one by one otherwise.
            let args = [&args[..], &["-q"]].concat();
            let run = urinorm(&args, stdin);
            assert_eq!(run.code, 2, "{name} {args:?}: {}", run.stderr);
            assert!(run.stderr.contains(&says), "{name}: {}", run.stderr);
            let shown = if args[1] == "-" { "'<stdin>'" } else { name };
            assert!(run.stderr.contains(shown), "{name}: {}", run.stderr);
            assert!(!run.stderr.contains("lines read"), "{name}: {}", run.stderr);
            assert_eq!(run.stderr.lines().count(), 1, "{name}: {}", run.stderr);
            assert!(!out.exists(), "{name}: -o was put in place");
        }
    }
    // A format urinorm does not read is named, with what to do.
    let xz = file(dir.path(), "urls.txt", b"\xfd7zXZ\0\0\x04");
    let run = urinorm(&["dedup", xz.to_str().unwrap()], b"");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("is xz-compressed") && run.stderr.contains("xz -dc"),
        "{}",
        run.stderr
    );
}
