//! Untrusted bytes never reach the terminal as they are: every diagnostic
//! shows them escaped (a URL list can hold escape sequences that retitle a
//! terminal or clear its screen), while the `--rejects` file keeps the raw
//! line, so nothing is lost.

use std::os::unix::ffi::OsStrExt;
use std::process::Command;

use crate::common::cli::{Run, urinorm};

/// Whether a terminal could act on any of `text`: a control byte other than
/// the newline that ends each line, a C1 control, or a character that
/// reorders or hides text.
fn acts_on_a_terminal(text: &str) -> bool {
    text.chars().any(|c| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
    })
}

fn assert_inert(what: &str, run: &Run) {
    assert!(
        !acts_on_a_terminal(&run.stderr),
        "{what}: stderr {:?}",
        run.stderr
    );
}

/// Lines with every byte, ANSI and OSC sequences, C1 controls written in
/// UTF-8 and a right-to-left override.
fn hostile_lines() -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = (0..=255u8)
        .filter(|&b| b != b'\n')
        .map(|b| [&b"http://a/"[..], &[b], b"x"].concat())
        .collect();
    lines.push(b"http://a/\x1b]0;pwned\x07\x1b[2J".to_vec());
    lines.push(b"\x1b[31mred\x1b[0m".to_vec());
    lines.push("http://a/\u{9b}2J\u{202e}gpj.exe".as_bytes().to_vec());
    lines.push(b"\x1bP+q\x1b\\".to_vec());
    lines
}

#[test]
fn the_summary_shows_every_byte_escaped() {
    // The summary shows the first five rejected lines: one run per line.
    for line in hostile_lines() {
        let input = [&line[..], b"\n"].concat();
        assert_inert(&format!("dedup {line:?}"), &urinorm(&["dedup"], &input));
    }
    let all: Vec<u8> = hostile_lines().join(&b'\n');
    for command in [
        &["normalize"][..],
        &["resolve", "--base", "http://a/"],
        &["ladder"],
    ] {
        let run = urinorm(command, &all);
        assert_inert(&format!("{command:?}"), &run);
        // What they write is URIs, and the ladder's report shows them escaped.
        assert!(
            !acts_on_a_terminal(&run.stdout),
            "{command:?}: {:?}",
            run.stdout
        );
    }
}

#[test]
fn explain_shows_the_uri_escaped() {
    for line in hostile_lines() {
        if line.contains(&0) {
            continue; // no argument can hold a NUL byte
        }
        let output = Command::new(env!("CARGO_BIN_EXE_urinorm"))
            .arg("explain")
            .arg(std::ffi::OsStr::from_bytes(&line))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!acts_on_a_terminal(&stdout), "{line:?}: {stdout:?}");
        assert!(!acts_on_a_terminal(&String::from_utf8_lossy(
            &output.stderr
        )));
    }
}

#[test]
fn file_names_are_escaped_and_the_rejects_file_keeps_the_raw_line() {
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"list\x1b]0;x\x07.txt");
    let path = dir.path().join(name);
    let line = b"http://a/\x1b[2J\n";
    std::fs::write(&path, line).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let output = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .arg("normalize")
        .arg(&path)
        .arg("--rejects")
        .arg(&rejects)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!acts_on_a_terminal(&stderr), "{stderr:?}");
    let written = std::fs::read(&rejects).unwrap();
    assert!(
        written.ends_with(line),
        "the raw line is the last field: {written:?}"
    );
    let missing = Command::new(env!("CARGO_BIN_EXE_urinorm"))
        .arg("dedup")
        .arg(
            dir.path()
                .join(std::ffi::OsStr::from_bytes(b"no\x1b[2Jsuch")),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr.contains("no\\x1b[2Jsuch") && !acts_on_a_terminal(&stderr),
        "{stderr:?}"
    );
}
