//! `urinorm completions SHELL` and `urinorm man`: scripts a shell can load,
//! and a manual page that names every subcommand.

use std::process::Command;

use crate::common::cli::urinorm;

const SUBCOMMANDS: [&str; 9] = [
    "normalize",
    "dedup",
    "ladder",
    "resolve",
    "serve",
    "explain",
    "transforms",
    "completions",
    "man",
];

#[test]
fn bash_loads_the_completions_and_completes_subcommands() {
    let script = urinorm(&["completions", "bash"], b"");
    assert_eq!(script.code, 0, "{}", script.stderr);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("urinorm.bash");
    std::fs::write(&path, &script.stdout).unwrap();
    // Load it, then ask the completion function what follows `urinorm de`.
    let probe = format!(
        "source {}; COMP_WORDS=(urinorm de); COMP_CWORD=1; _urinorm urinorm de urinorm; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"; complete -p urinorm",
        path.display()
    );
    let output = Command::new("bash").arg("-c").arg(probe).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.lines().any(|l| l == "dedup"), "{stdout}");
    assert!(stdout.contains("-F _urinorm urinorm"), "{stdout}");
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = urinorm(&["completions", shell], b"");
        assert_eq!(script.code, 0, "{shell}: {}", script.stderr);
        for name in SUBCOMMANDS {
            assert!(script.stdout.contains(name), "{shell} lacks {name}");
        }
    }
    assert_eq!(urinorm(&["completions", "tcsh"], b"").code, 2);
}

#[test]
fn the_manual_page_is_roff_naming_every_subcommand() {
    let page = urinorm(&["man"], b"");
    assert_eq!(page.code, 0, "{}", page.stderr);
    assert!(page.stdout.contains(".TH urinorm 1"), "{}", page.stdout);
    for name in SUBCOMMANDS {
        assert!(page.stdout.contains(name), "the page lacks {name}");
    }
}

/// Every page the main page refers to exists: `man --dir` writes them all,
/// and `man SUBCOMMAND` writes one.
#[test]
fn every_subcommand_has_its_own_page() {
    let dir = tempfile::tempdir().unwrap();
    let run = urinorm(&["man", "--dir", dir.path().to_str().unwrap()], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let main = urinorm(&["man"], b"").stdout;
    for name in SUBCOMMANDS {
        let file = format!("urinorm-{name}.1");
        let page = std::fs::read_to_string(dir.path().join(&file)).unwrap();
        assert!(page.contains(&format!(".TH urinorm-{name} 1")), "{file}");
        assert!(main.contains(&format!("urinorm\\-{name}(1)")), "{name}");
    }
    for file in [
        "urinorm.1",
        "urinorm-seen.1",
        "urinorm-seen-add.1",
        "urinorm-seen-salvage.1",
        "urinorm-seen-export.1",
        "urinorm-seen-import.1",
        "urinorm-rules.1",
        "urinorm-rules-learn.1",
    ] {
        assert!(dir.path().join(file).exists(), "{file}");
    }
    assert!(
        run.stdout.starts_with("23 manual pages written"),
        "{}",
        run.stdout
    );
    let one = urinorm(&["man", "seen", "add"], b"");
    assert!(
        one.stdout.contains(".TH urinorm-seen-add 1"),
        "{}",
        one.stdout
    );
    let unknown = urinorm(&["man", "sene"], b"");
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no subcommand 'sene'"),
        "{}",
        unknown.stderr
    );
}
