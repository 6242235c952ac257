//! The README's examples, run as a user would run them (#40): every
//! `console` block holds commands (`$ ...`, a trailing `\` continues one)
//! each followed by what it prints, standard output and standard error as
//! a terminal shows them. Each block runs in a fresh directory where
//! `testdata/` is the repository's, `urinorm` on the `PATH`, by `sh`, and
//! its output must be what the README shows, once what varies from run to
//! run (times, rates, thread counts) is masked on both sides. A last line
//! `…` stands for the rest of the output, not compared. The fence may say
//! the last command's exit code: ```` ```console exit=1 ````; every other
//! command must exit 0.
//!
//! A README example that drifts from what the program prints fails here,
//! as a doctest does.

use std::path::Path;
use std::process::Command;

use regex::Regex;

/// One command of a block and what it prints.
struct Example {
    /// Where it starts in the README, for messages.
    line: usize,
    command: String,
    output: Vec<String>,
}

/// One `console` block.
struct Block {
    line: usize,
    exit: i32,
    examples: Vec<Example>,
}

fn console_blocks(readme: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = readme.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```console") else {
            continue;
        };
        let exit = match info.trim() {
            "" => 0,
            other => other
                .strip_prefix("exit=")
                .and_then(|code| code.parse().ok())
                .unwrap_or_else(|| panic!("README.md:{}: unknown fence info {other:?}", n + 1)),
        };
        let mut block = Block {
            line: n + 1,
            exit,
            examples: Vec::new(),
        };
        let mut continued = false;
        for (n, line) in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                block.examples.push(Example {
                    line: n + 1,
                    command: command.to_string(),
                    output: Vec::new(),
                });
            } else {
                let example = block
                    .examples
                    .last_mut()
                    .unwrap_or_else(|| panic!("README.md:{}: output before any command", n + 1));
                match continued {
                    true => example.command += &format!("\n{line}"),
                    false => example.output.push(line.to_string()),
                }
            }
            let command = &block.examples.last().unwrap().command;
            continued = block.examples.last().unwrap().output.is_empty() && command.ends_with('\\');
        }
        blocks.push(block);
    }
    blocks
}

/// What varies from run to run, masked the same way in what is shown and
/// what is printed.
fn masked(text: &str) -> String {
    let rules = [
        // The summary's time and rate, the ladder's total time.
        (r"\b\d+\.\d\d s\b", "#.## s"),
        (r"\(\d+ MB/s, \d+ threads?\)", "(# MB/s, # threads)"),
        // The ladder table's last column (seconds per step).
        (
            r"(?m)^(\S+ +\d+ +\d+ +\d+\.\d\d% +\d+) +\d+\.\d\d$",
            "$1 #.##",
        ),
    ];
    rules
        .iter()
        .fold(text.to_string(), |text, (pattern, with)| {
            Regex::new(pattern)
                .unwrap()
                .replace_all(&text, *with)
                .into_owned()
        })
}

/// Runs `command` with `sh` in `dir`, standard error merged into standard
/// output; returns the exit code and the output.
fn run(command: &str, dir: &Path) -> (i32, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_urinorm")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    let code = output.status.code().expect("exited, not killed");
    (code, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Compares what `example` printed with what the README shows.
fn check(example: &Example, printed: &str) -> Result<(), String> {
    let mut shown: Vec<&str> = example.output.iter().map(String::as_str).collect();
    let elided = shown.last() == Some(&"…");
    if elided {
        shown.pop();
    }
    let printed = masked(printed);
    let mut printed: Vec<&str> = printed.lines().collect();
    if elided && printed.len() > shown.len() {
        printed.truncate(shown.len());
    }
    // A blank line may part one command's output from the next command.
    for lines in [&mut shown, &mut printed] {
        while lines.last() == Some(&"") {
            lines.pop();
        }
    }
    let shown = masked(&shown.join("\n"));
    let printed = printed.join("\n");
    if shown == printed {
        return Ok(());
    }
    Err(format!(
        "README.md:{}: `{}` prints (masked):\n{printed}\n--- where the README shows (masked):\n{shown}",
        example.line, example.command
    ))
}

#[test]
fn the_readme_examples_print_what_the_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(blocks.len() >= 4, "the README's examples were not found");
    let mut failures = Vec::new();
    for block in &blocks {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root.join("testdata"), dir.path().join("testdata")).unwrap();
        for (i, example) in block.examples.iter().enumerate() {
            let (code, printed) = run(&example.command, dir.path());
            let expected = match i + 1 == block.examples.len() {
                true => block.exit,
                false => 0,
            };
            if code != expected {
                failures.push(format!(
                    "README.md:{}: `{}` exits {code}, not {expected} (block at line {}):\n{printed}",
                    example.line, example.command, block.line
                ));
                continue;
            }
            if let Err(failure) = check(example, &printed) {
                failures.push(failure);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn blocks_are_read_as_commands_and_outputs() {
    let readme =
        "text\n```console exit=1\n$ a \\\n  b\nout 1\n\n$ c\n…\n```\n```sh\n$ not run\n```\n";
    let blocks = console_blocks(readme);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].exit, 1);
    let examples = &blocks[0].examples;
    assert_eq!(examples[0].command, "a \\\n  b");
    assert_eq!(examples[0].output, ["out 1", ""]);
    assert_eq!(examples[1].command, "c");
    let elided = check(&examples[1], "anything\nat all\n");
    assert!(elided.is_ok());
    assert!(check(&examples[0], "out 2\n").is_err());
    assert_eq!(
        masked("in 0.31 s (96 MB/s, 2 threads)"),
        "in #.## s (# MB/s, # threads)"
    );
}
