//! `--preset ia` the way a web archive's operator runs it: SURT keys that
//! match CDX indexes, from a file, with `--without` taking one step out,
//! and a dedup on those keys merging what IA merges.

use crate::common::cli::urinorm;

const LINES: &str = "http://www.archive.org/\n\
http://www34.Archive.org/Goo/?b=2&a=1\n\
https://archive.org/goo?a=1&b=2#top\n\
http://archive.org/a%2Fb?q=%5B1%5D\n\
http://1.2.3.4/\n";

fn keys(flags: &[&str]) -> String {
    let mut args = vec!["normalize", "--preset", "ia", "--key", "surt"];
    args.extend_from_slice(flags);
    let run = urinorm(&args, LINES.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn surt_keys_are_cdx_keys() {
    assert_eq!(
        keys(&[]),
        "org,archive)/\norg,archive)/goo?a=1&b=2\norg,archive)/goo?a=1&b=2\norg,archive)/a/b?q=[1]\n4,3,2,1)/\n"
    );
}

#[test]
fn without_takes_one_step_out() {
    let out = keys(&["--without", "strip-www-digits", "--without", "cdx-spelling"]);
    assert_eq!(
        out,
        "org,archive,www)/\norg,archive,www34)/goo?a=1&b=2\norg,archive)/goo?a=1&b=2\norg,archive)/a/b?q=%5B1%5D\n1.2.3.4)/\n"
    );
}

#[test]
fn dedup_on_ia_keys_merges_what_ia_merges() {
    let run = urinorm(
        &[
            "dedup", "--preset", "ia", "--key", "surt", "--emit", "count",
        ],
        LINES.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "1\torg,archive)/\n2\torg,archive)/goo?a=1&b=2\n1\torg,archive)/a/b?q=[1]\n1\t4,3,2,1)/\n"
    );
}

#[test]
fn the_canonical_form_stays_a_uri() {
    let run = urinorm(&["normalize", "--preset", "ia"], LINES.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "http://archive.org/\nhttp://archive.org/goo?a=1&b=2\nhttps://archive.org/goo?a=1&b=2\nhttp://archive.org/a/b?q=%5B1%5D\nhttp://1.2.3.4/\n"
    );
}
