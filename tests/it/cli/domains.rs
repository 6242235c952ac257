//! Keys on hosts and registrable domains (`--key host|domain`), as link
//! dataset analysts and crawler operators count and cut by site.

use crate::common::cli::urinorm;

const LINES: &str = "http://www.bbc.co.uk/a\nhttp://news.bbc.co.uk/b\nHTTP://WWW.BBC.CO.UK:80/c\n\
http://foo.github.io/\nhttp://bar.github.io/x\nhttp://1.2.3.4/\nhttp://[::1]/\nmailto:a@b.c\nhttp://co.uk/\n\n";

#[test]
fn dedup_counts_lines_per_domain_like_uniq_c() {
    let run = urinorm(
        &["dedup", "--key", "domain", "--emit", "count"],
        LINES.as_bytes(),
    );
    assert_eq!(run.code, 1, "mailto: has no host: {}", run.stderr);
    assert_eq!(
        run.stdout,
        "3\tbbc.co.uk\n1\tfoo.github.io\n1\tbar.github.io\n1\t1.2.3.4\n1\t[::1]\n1\tco.uk\n"
    );
    assert!(
        run.stderr
            .contains("10 lines read = 6 unique + 2 duplicates + 1 rejected + 1 blank"),
        "{}",
        run.stderr
    );
    // A reason about the whole URI points at no byte.
    assert!(
        run.stderr.contains("the URI has no host to key on\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_first_url_of_each_host_and_each_domain() {
    let hosts = urinorm(
        &["dedup", "-q", "--key", "host", "--emit", "first"],
        LINES.as_bytes(),
    );
    assert_eq!(
        hosts.stdout,
        "http://www.bbc.co.uk/a\nhttp://news.bbc.co.uk/b\nhttp://foo.github.io/\nhttp://bar.github.io/x\nhttp://1.2.3.4/\nhttp://[::1]/\nhttp://co.uk/\n"
    );
    let domains = urinorm(
        &["dedup", "-q", "--key", "domain", "--emit", "first"],
        LINES.as_bytes(),
    );
    assert_eq!(
        domains.stdout,
        "http://www.bbc.co.uk/a\nhttp://foo.github.io/\nhttp://bar.github.io/x\nhttp://1.2.3.4/\nhttp://[::1]/\nhttp://co.uk/\n"
    );
}

#[test]
fn normalize_writes_each_lines_host_and_domain() {
    let hosts = urinorm(&["normalize", "-q", "--key", "host"], LINES.as_bytes());
    let domains = urinorm(&["normalize", "-q", "--key", "domain"], LINES.as_bytes());
    assert_eq!(
        hosts.stdout.lines().collect::<Vec<_>>(),
        [
            "www.bbc.co.uk",
            "news.bbc.co.uk",
            "www.bbc.co.uk",
            "foo.github.io",
            "bar.github.io",
            "1.2.3.4",
            "[::1]",
            "co.uk"
        ]
    );
    assert_eq!(
        domains.stdout.lines().collect::<Vec<_>>(),
        [
            "bbc.co.uk",
            "bbc.co.uk",
            "bbc.co.uk",
            "foo.github.io",
            "bar.github.io",
            "1.2.3.4",
            "[::1]",
            "co.uk"
        ]
    );
}

/// A store of domain keys records the list the domains came from.
#[test]
fn a_domain_keyed_store_records_the_suffix_list() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s").display().to_string();
    let run = urinorm(
        &["dedup", "-q", "--key", "domain", "--seen", &store],
        LINES.as_bytes(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let stats = urinorm(&["seen", "stats", &store], b"");
    assert!(
        stats.stdout.contains("key=domain, psl=built-in (psl "),
        "{}",
        stats.stdout
    );
}

/// `--psl FILE` puts a list read at run time in force (for domain keys and
/// strip-www, and in a store's record); one that is not a list is exit 2.
#[test]
fn a_newer_list_is_read_with_psl() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.dat");
    std::fs::write(
        &list,
        "// ===BEGIN ICANN DOMAINS===\ncom\nexample.com\n// ===END ICANN DOMAINS===\n",
    )
    .unwrap();
    let list = list.to_str().unwrap();
    let lines = b"http://www.a.example.com/\nhttp://www.b.co.uk/\n";
    let read = urinorm(
        &["normalize", "-q", "--key", "domain", "--psl", list],
        lines,
    );
    assert_eq!(read.stdout, "a.example.com\nco.uk\n");
    let stripped = urinorm(
        &["normalize", "-q", "--with", "strip-www", "--psl", list],
        b"http://www.example.com/\n",
    );
    assert_eq!(
        stripped.stdout, "http://www.example.com/\n",
        "example.com is a suffix in this list"
    );
    let store = dir.path().join("s").display().to_string();
    urinorm(
        &[
            "dedup", "-q", "--key", "domain", "--psl", list, "--seen", &store,
        ],
        lines,
    );
    let refused = urinorm(&["dedup", "-q", "--key", "domain", "--seen", &store], lines);
    assert_eq!(
        refused.code, 2,
        "another list makes other keys: {}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("psl: the store's read from a file"),
        "{}",
        refused.stderr
    );
    let bad = dir.path().join("bad.dat");
    std::fs::write(&bad, "x\n").unwrap();
    let run = urinorm(
        &["normalize", "--psl", bad.to_str().unwrap()],
        b"http://a/\n",
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("not a Public Suffix List"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_version_names_the_list_built_in() {
    let run = urinorm(&["--version"], b"");
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains(&format!(
            "Public Suffix List built in: psl {}",
            urinorm::domain::PSL_VERSION
        )),
        "{}",
        run.stdout
    );
}
