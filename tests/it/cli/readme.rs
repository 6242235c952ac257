//! The examples of the README and of the book (`docs/src/**/*.md`), run as
//! a user would run them: every `console` block holds commands (`$ ...`, a
//! trailing `\` continues one) each followed by what it prints, standard
//! output and standard error as a terminal shows them. Each block runs in
//! a fresh directory where `testdata/` is the repository's, `urinorm` on
//! the `PATH`, by `sh`, and its output must be what the page shows, once
//! what varies from run to run (times, rates, thread counts) is masked on
//! both sides. A last line `…` stands for the rest of the output, not
//! compared. The fence may say the last command's exit code:
//! ```` ```console exit=1 ````; every other command must exit 0.
//!
//! A `sh` block is a script run in a fresh directory of its own, which must
//! exit 0; a block
//! that cannot run in a fresh directory (it builds, installs, or needs a
//! service or a corpus) is fenced ```` ```sh norun ````.
//!
//! An example that drifts from what the program prints fails here, as a
//! doctest does, naming `file:line`; `URINORM_BLESS=1` writes what the
//! commands print into the pages instead (a `…` block keeps as many lines
//! as it showed).

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

/// One command of a block and what it prints.
struct Example {
    /// Where it starts in its page (1-based), for messages.
    line: usize,
    command: String,
    output: Vec<String>,
    /// Where its output starts in the page (0-based line index).
    output_at: usize,
}

/// One `console` block.
struct Block {
    line: usize,
    exit: i32,
    examples: Vec<Example>,
}

/// One `sh` block: a script.
struct Script {
    line: usize,
    text: String,
}

/// The pages whose examples run: the README, then the book's chapters.
fn pages(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    let mut found = vec![root.join("README.md")];
    walk(&root.join("docs/src"), &mut found);
    found
}

fn console_blocks(name: &str, page: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = page.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let Some(info) = line.strip_prefix("```console") else {
            continue;
        };
        let exit = match info.trim() {
            "" => 0,
            other => other
                .strip_prefix("exit=")
                .and_then(|code| code.parse().ok())
                .unwrap_or_else(|| panic!("{name}:{}: unknown fence info {other:?}", n + 1)),
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
                    output_at: n + 1,
                });
            } else {
                let example = block
                    .examples
                    .last_mut()
                    .unwrap_or_else(|| panic!("{name}:{}: output before any command", n + 1));
                match continued {
                    true => {
                        example.command += &format!("\n{line}");
                        example.output_at = n + 1;
                    }
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

/// The `sh` blocks (not `sh norun`) of a page.
fn scripts(page: &str) -> Vec<Script> {
    let mut scripts = Vec::new();
    let mut lines = page.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if line.trim_end() != "```sh" {
            continue;
        }
        let text: Vec<&str> = lines
            .by_ref()
            .map(|(_, line)| line)
            .take_while(|line| !line.starts_with("```"))
            .collect();
        scripts.push(Script {
            line: n + 1,
            text: text.join("\n"),
        });
    }
    scripts
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
        .env("HOME", dir)
        .env_remove("URINORM_BLESS")
        .output()
        .unwrap();
    let code = output.status.code().expect("exited, not killed");
    (code, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// A fresh directory with the repository's `testdata/` in it.
fn fresh(root: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("testdata"), dir.path().join("testdata")).unwrap();
    dir
}

/// Compares what `example` printed with what the page shows.
fn check(name: &str, example: &Example, printed: &str) -> Result<(), String> {
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
        "{name}:{}: `{}` prints (masked):\n{printed}\n--- where the page shows (masked):\n{shown}",
        example.line, example.command
    ))
}

/// The lines to write in place of `example`'s output: what it printed,
/// as many lines as it showed when it ended in `…`.
fn blessed(example: &Example, printed: &str) -> Vec<String> {
    let shown = &example.output;
    let elided = shown.last().map(String::as_str) == Some("…");
    let trailing = shown.iter().rev().take_while(|l| l.is_empty()).count();
    let mut lines: Vec<String> = printed.lines().map(str::to_string).collect();
    if elided {
        let keep = shown.len() - 1;
        if lines.len() > keep {
            lines.truncate(keep);
            lines.push("…".to_string());
        }
    }
    lines.extend(std::iter::repeat_n(String::new(), trailing.min(1)));
    lines
}

#[test]
fn the_examples_print_what_the_pages_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("URINORM_BLESS").is_some();
    let only = std::env::var("URINORM_DOCS").ok();
    let mut failures = Vec::new();
    let mut console = 0;
    let mut readme = 0;
    for path in pages(root) {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        if only
            .as_ref()
            .is_some_and(|only| !name.contains(only.as_str()))
        {
            continue;
        }
        let page = std::fs::read_to_string(&path).unwrap();
        let blocks = console_blocks(&name, &page);
        console += blocks.len();
        if name == "README.md" {
            readme = blocks.len();
        }
        // (output_at, old length, new lines), to write back when blessing.
        let mut rewrites = Vec::new();
        let dir = fresh(root);
        for block in &blocks {
            for (i, example) in block.examples.iter().enumerate() {
                let (code, printed) = run(&example.command, dir.path());
                let expected = match i + 1 == block.examples.len() {
                    true => block.exit,
                    false => 0,
                };
                if code != expected {
                    failures.push(format!(
                        "{name}:{}: `{}` exits {code}, not {expected} (block at line {}):\n{printed}",
                        example.line, example.command, block.line
                    ));
                    continue;
                }
                if let Err(failure) = check(&name, example, &printed) {
                    match bless {
                        true => rewrites.push((
                            example.output_at,
                            example.output.len(),
                            blessed(example, &printed),
                        )),
                        false => failures.push(failure),
                    }
                }
            }
        }
        for script in scripts(&page) {
            let dir = fresh(root);
            let (code, printed) = run(&format!("set -e\n{}", script.text), dir.path());
            if code != 0 {
                failures.push(format!(
                    "{name}:{}: the sh block exits {code}, not 0 (fence it `sh norun` if it cannot run in a fresh directory):\n{printed}",
                    script.line
                ));
            }
        }
        if !rewrites.is_empty() {
            let mut lines: Vec<String> = page.lines().map(str::to_string).collect();
            for (at, len, new) in rewrites.into_iter().rev() {
                lines.splice(at..at + len, new);
            }
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        }
    }
    if only.is_none() {
        assert!(readme >= 4, "the README's examples were not found");
        assert!(
            console >= 30,
            "only {console} console blocks in the README and the book"
        );
    }
    assert!(
        failures.is_empty(),
        "{}\n\n(URINORM_BLESS=1 writes what the commands print into the pages)",
        failures.join("\n\n")
    );
}

/// Every page with a Rust example is a doctest (`src/lib.rs` includes it),
/// so no Rust example in the README or the book goes untested.
#[test]
fn every_rust_example_is_a_doctest() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    for path in pages(root) {
        let name = path.strip_prefix(root).unwrap().display().to_string();
        let page = std::fs::read_to_string(&path).unwrap();
        // An opening fence with no info string, or `rust…`.
        let mut open = false;
        let mut rust = false;
        for line in page.lines().filter(|l| l.starts_with("```")) {
            let info = line.trim_start_matches('`').trim();
            if !open && (info.is_empty() || info.starts_with("rust")) {
                rust = true;
            }
            open = !open;
        }
        let included = lib.contains(&format!("include_str!(\"../{name}\")"));
        assert!(
            !rust || included,
            "{name} has a Rust example (or a bare ``` fence, which rustdoc takes for Rust) that src/lib.rs does not include as a doctest"
        );
    }
}

#[test]
fn blocks_are_read_as_commands_and_outputs() {
    let page = "text\n```console exit=1\n$ a \\\n  b\nout 1\n\n$ c\n…\n```\n```sh\necho run\n```\n```sh norun\ncargo\n```\n";
    let blocks = console_blocks("page", page);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].exit, 1);
    let examples = &blocks[0].examples;
    assert_eq!(examples[0].command, "a \\\n  b");
    assert_eq!(examples[0].output, ["out 1", ""]);
    assert_eq!(examples[0].output_at, 4);
    assert_eq!(examples[1].command, "c");
    let elided = check("page", &examples[1], "anything\nat all\n");
    assert!(elided.is_ok());
    assert!(check("page", &examples[0], "out 2\n").is_err());
    assert_eq!(blessed(&examples[0], "out 2\n"), ["out 2", ""]);
    assert_eq!(blessed(&examples[1], "x\ny\n"), ["…"]);
    let scripts = scripts(page);
    assert_eq!(scripts.len(), 1);
    assert_eq!(scripts[0].text, "echo run");
    assert_eq!(
        masked("in 0.31 s (96 MB/s, 2 threads)"),
        "in #.## s (# MB/s, # threads)"
    );
}
