//! The book's reference part (`docs/src/reference/`), generated from the
//! binary itself: every subcommand's `--help` (clap's definition, the one
//! that parses the flags) and `urinorm transforms` (the protocol rung's
//! catalogue), so the reference cannot drift from the code. A page that
//! differs from what the binary prints, a page the binary no longer
//! makes, or one `docs/src/SUMMARY.md` does not list fails here;
//! `URINORM_BLESS=1` rewrites the pages instead.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::cli::urinorm;

const BLESS: &str = "URINORM_BLESS=1 cargo test --test it cli::reference";

/// `urinorm ARGS… --help`, as a user's pipe shows it.
fn help(args: &[&str]) -> String {
    let mut args = args.to_vec();
    args.push("--help");
    let run = urinorm(&args, b"");
    assert_eq!(run.code, 0, "urinorm {}: {}", args.join(" "), run.stderr);
    run.stdout
}

/// The subcommands a help text lists under `Commands:` (`help` aside).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

fn header(source: &str) -> String {
    format!(
        "<!-- Generated from `{source}` by tests/it/cli/reference.rs: do not edit. \
         `{BLESS}` rewrites it. -->\n\n"
    )
}

fn block(command: &str, text: &str) -> String {
    format!("```text\n$ {command}\n{}\n```\n", text.trim_end())
}

/// Every page of the reference, by file name.
fn pages() -> BTreeMap<String, String> {
    let mut pages = BTreeMap::new();
    let top = help(&[]);
    let commands = subcommands(&top);
    let mut index = header("urinorm --help");
    index += "# The command line\n\n";
    index += "Each subcommand's page is its `--help`, as the binary prints it \
              (`urinorm man SUBCOMMAND` has the same text as a manual page).\n\n";
    for name in &commands {
        index += &format!("- [`urinorm {name}`]({name}.md)\n");
    }
    index += "- [Transforms and presets](catalogue.md)\n\n";
    index += &block("urinorm --help", &top);
    pages.insert("index.md".to_string(), index);
    for name in &commands {
        let text = help(&[name]);
        let mut page = header(&format!("urinorm {name} --help"));
        page += &format!("# urinorm {name}\n\n");
        page += &block(&format!("urinorm {name} --help"), &text);
        for sub in subcommands(&text) {
            page += &format!("\n## urinorm {name} {sub}\n\n");
            page += &block(
                &format!("urinorm {name} {sub} --help"),
                &help(&[name, &sub]),
            );
        }
        pages.insert(format!("{name}.md"), page);
    }
    let listing = urinorm(&["transforms"], b"");
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let mut page = header("urinorm transforms");
    page += "# Transforms and presets\n\n";
    page += "The protocol rung's catalogue, in the order the transforms apply \
              ([Rungs and transforms](../rungs.md) explains each, with its risk).\n\n";
    page += &block("urinorm transforms", &listing.stdout);
    pages.insert("catalogue.md".to_string(), page);
    pages
}

#[test]
fn the_reference_pages_are_what_the_binary_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("docs/src/reference");
    let pages = pages();
    let on_disk: BTreeMap<String, String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    (name, std::fs::read_to_string(&p).unwrap())
                })
                .collect()
        })
        .unwrap_or_default();
    if std::env::var_os("URINORM_BLESS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        for name in on_disk.keys().filter(|name| !pages.contains_key(*name)) {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
        for (name, text) in &pages {
            if on_disk.get(name) != Some(text) {
                std::fs::write(dir.join(name), text).unwrap();
            }
        }
    } else {
        let mut stale = Vec::new();
        for (name, text) in &pages {
            match on_disk.get(name) {
                None => stale.push(format!("docs/src/reference/{name} is missing")),
                Some(old) if old != text => {
                    stale.push(format!("docs/src/reference/{name} is stale"))
                }
                Some(_) => {}
            }
        }
        for name in on_disk.keys().filter(|name| !pages.contains_key(*name)) {
            stale.push(format!(
                "docs/src/reference/{name} is no page the binary makes"
            ));
        }
        assert!(
            stale.is_empty(),
            "{}\nthe reference is generated from the binary: run `{BLESS}` and review the diff",
            stale.join("\n")
        );
    }
    let summary = std::fs::read_to_string(root.join("docs/src/SUMMARY.md")).unwrap();
    let unlisted: Vec<_> = pages
        .keys()
        .filter(|name| !summary.contains(&format!("(reference/{name})")))
        .collect();
    assert!(
        unlisted.is_empty(),
        "docs/src/SUMMARY.md does not list reference pages {unlisted:?}"
    );
}

#[test]
fn subcommands_are_read_from_a_help_text() {
    let text = "Usage: x\n\nCommands:\n  add     Adds\n  forget  Forgets\n  help    Print\n\nOptions:\n  -h\n";
    assert_eq!(subcommands(text), ["add", "forget"]);
    assert!(subcommands("Usage: x\n\nOptions:\n  -h\n").is_empty());
}
