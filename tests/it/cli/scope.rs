//! Scope filters (`--keep-domain`, `--drop-regex`, `--keep-scheme`, …) and
//! per-site caps (`--max-per-host`, `--max-per-domain`), run the way a
//! crawler operator runs them: every line counted, the invariant kept.

use std::collections::{HashMap, HashSet};

use crate::common::cli::{store_keys, urinorm, with_stats};
use serde_json::Value;

/// Every line read is counted once.
fn assert_balances(s: &Value) {
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    assert_eq!(
        n("lines"),
        n("unique")
            + n("duplicates")
            + n("seen")
            + n("capped")
            + n("filtered")
            + n("rejected")
            + n("blank"),
        "{s}"
    );
}

const LINKS: &str = "http://example.com/a\njavascript:void(0)\nhttp://notexample.com/\n\n\
HTTP://WWW.EXAMPLE.COM/logo.png\nmailto:x@example.com\nhttp://shop.example.com./b\n\
http://ads.example.com/c\nhttp://example.com.evil.org/\nhttp://example.com/a\n";

#[test]
fn domains_are_kept_and_dropped_on_label_boundaries() {
    let (run, stats) = with_stats(
        &[
            "dedup",
            "--keep-domain",
            "example.com",
            "--drop-domain",
            "ADS.example.com",
        ],
        LINKS.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "http://example.com/a\nhttp://www.example.com/logo.png\nhttp://shop.example.com./b\n"
    );
    assert_eq!(stats["filtered"], 5, "{stats}");
    assert_eq!(stats["duplicates"], 1);
    assert_balances(&stats);
    assert!(
        run.stderr.contains(
            "10 lines read = 3 unique + 1 duplicates + 5 filtered + 0 rejected + 1 blank"
        ),
        "{}",
        run.stderr
    );
}

/// `*.example.com` and `.example.com` mean what a domain filter is: the
/// domain and below; a `*` anywhere else is refused with a sentence, never
/// a filter that quietly matches nothing. A bad name's byte is its own.
#[test]
fn a_wildcard_domain_is_the_domain_and_below_or_refused() {
    let lines = b"http://a.google.com/\nhttp://google.com/x\nhttp://notgoogle.com/\n";
    for given in ["*.google.com", ".google.com", "google.com"] {
        let run = urinorm(&["dedup", "-q", "--keep-domain", given], lines);
        assert_eq!(
            run.stdout, "http://a.google.com/\nhttp://google.com/x\n",
            "{given}"
        );
    }
    for given in ["*", "a*.com", "*google.com"] {
        let run = urinorm(&["dedup", "-q", "--keep-domain", given], lines);
        assert_eq!(run.code, 2, "{given}");
        assert!(
            run.stderr.contains("write example.com for *.example.com"),
            "{}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    let run = urinorm(&["dedup", "-q", "--drop-domain", "bad name"], lines);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("space is not allowed in a URI at byte 3"),
        "{}",
        run.stderr
    );
}

#[test]
fn domain_lists_come_from_files_and_a_bad_entry_is_named_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("scope.txt");
    std::fs::write(
        &list,
        "# the crawl's scope\nexample.com  # the main site\n\nbücher.de\n",
    )
    .unwrap();
    let at = format!("@{}", list.display());
    let input = "http://www.example.com/\nhttp://xn--bcher-kva.de/x\nhttp://other.org/\n";
    for flags in [
        vec!["--keep-domain", at.as_str()],
        vec!["--keep-domains", list.to_str().unwrap()],
    ] {
        let mut args = vec!["dedup", "-q"];
        args.extend(flags);
        let run = urinorm(&args, input.as_bytes());
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(
            run.stdout,
            "http://www.example.com/\nhttp://xn--bcher-kva.de/x\n"
        );
    }
    std::fs::write(&list, "example.com\nhttp://evil\x1b[2J.com/\n").unwrap();
    let run = urinorm(
        &["dedup", "--drop-domains", list.to_str().unwrap()],
        input.as_bytes(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("scope.txt:2: "), "{}", run.stderr);
    assert!(
        run.stderr.contains("is not a domain name"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains('\x1b'),
        "control bytes escaped: {}",
        run.stderr
    );
    let missing = urinorm(
        &["dedup", "--keep-domain", "@/no/such/list"],
        input.as_bytes(),
    );
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("/no/such/list"),
        "{}",
        missing.stderr
    );
}

#[test]
fn patterns_and_schemes() {
    let (run, stats) = with_stats(
        &[
            "dedup",
            "--keep-scheme",
            "http,HTTPS",
            "--drop-regex",
            r"\.(png|jpg)$",
            "--drop-regex",
            "evil",
        ],
        LINKS.as_bytes(),
    );
    assert_eq!(
        run.stdout,
        "http://example.com/a\nhttp://notexample.com/\nhttp://shop.example.com./b\nhttp://ads.example.com/c\n"
    );
    assert_eq!(stats["filtered"], 4);
    assert_balances(&stats);
    let kept = urinorm(
        &[
            "dedup",
            "-q",
            "--keep-regex",
            "^mailto:",
            "--keep-regex",
            "/c$",
        ],
        LINKS.as_bytes(),
    );
    assert_eq!(
        kept.stdout,
        "mailto:x@example.com\nhttp://ads.example.com/c\n"
    );
    for (flag, value, says) in [
        ("--keep-regex", "(", "not a regular expression"),
        ("--keep-scheme", "1http", "is not a scheme"),
    ] {
        let run = urinorm(&["dedup", flag, value], LINKS.as_bytes());
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{}", run.stderr);
    }
}

#[test]
fn filtered_lines_keep_their_place_in_verdicts_and_aligned_output() {
    let verdicts = urinorm(
        &["dedup", "-q", "--emit", "verdict", "--keep-scheme", "http"],
        LINKS.as_bytes(),
    );
    assert_eq!(
        verdicts.stdout.lines().collect::<Vec<_>>(),
        [
            "new\thttp://example.com/a",
            "filtered",
            "new\thttp://notexample.com/",
            "blank",
            "new\thttp://www.example.com/logo.png",
            "filtered",
            "new\thttp://shop.example.com./b",
            "new\thttp://ads.example.com/c",
            "new\thttp://example.com.evil.org/",
            "dup\thttp://example.com/a",
        ]
    );
    let aligned = urinorm(
        &[
            "normalize",
            "-q",
            "--aligned",
            "--keep-domain",
            "example.com",
        ],
        format!("{LINKS}not a uri\n").as_bytes(),
    );
    let lines: Vec<&str> = aligned.stdout.lines().collect();
    assert_eq!(lines.len(), LINKS.lines().count() + 1, "{}", aligned.stdout);
    assert_eq!(
        lines,
        [
            "http://example.com/a",
            "",
            "",
            "",
            "http://www.example.com/logo.png",
            "",
            "http://shop.example.com./b",
            "http://ads.example.com/c",
            "",
            "http://example.com/a",
            "",
        ]
    );
}

#[test]
fn filters_see_the_uri_column_and_its_canonical_form_whatever_the_key() {
    let rows = "1\tHTTP://Example.COM/a\n2\tjavascript:x\n3\thttp://other.org/\n";
    let run = urinorm(
        &[
            "normalize",
            "-q",
            "--field",
            "2",
            "--keep-domain",
            "example.com",
        ],
        rows.as_bytes(),
    );
    assert_eq!(run.stdout, "1\thttp://example.com/a\n");
    let run = urinorm(
        &[
            "dedup",
            "-q",
            "--key",
            "domain",
            "--keep-regex",
            "^http://www\\.",
        ],
        b"http://www.a.co.uk/1\nhttp://b.a.co.uk/2\nhttp://WWW.c.org/\n",
    );
    assert_eq!(run.stdout, "a.co.uk\nc.org\n");
}

const FRONTIER: &str = "http://a.com/1\nhttp://a.com/2\nhttp://b.a.com/1\nhttp://a.com/3\n\
http://a.com/1\nhttp://b.com/1\nmailto:x@y\nhttp://a.com/3\nhttp://WWW.a.com/4\n";

#[test]
fn caps_keep_the_first_n_distinct_uris_of_each_host_or_domain() {
    let (hosts, stats) = with_stats(&["dedup", "--max-per-host", "2"], FRONTIER.as_bytes());
    assert_eq!(hosts.code, 0, "{}", hosts.stderr);
    assert_eq!(
        hosts.stdout,
        "http://a.com/1\nhttp://a.com/2\nhttp://b.a.com/1\nhttp://b.com/1\nmailto:x@y\nhttp://www.a.com/4\n"
    );
    // a.com/3 is the third of a.com: capped once; its repeat is a duplicate.
    assert_eq!(
        (stats["capped"].as_u64(), stats["duplicates"].as_u64()),
        (Some(1), Some(2))
    );
    assert_balances(&stats);
    assert!(hosts.stderr.contains("+ 1 capped"), "{}", hosts.stderr);
    let (domains, stats) = with_stats(&["dedup", "--max-per-domain", "2"], FRONTIER.as_bytes());
    assert_eq!(
        domains.stdout,
        "http://a.com/1\nhttp://a.com/2\nhttp://b.com/1\nmailto:x@y\n"
    );
    assert_eq!(stats["capped"], 3);
    assert_balances(&stats);
    let counts = urinorm(
        &["dedup", "-q", "--max-per-domain", "2", "--emit", "count"],
        FRONTIER.as_bytes(),
    );
    assert_eq!(
        counts.stdout,
        "2\thttp://a.com/1\n1\thttp://a.com/2\n1\thttp://b.com/1\n1\tmailto:x@y\n"
    );
    let verdicts = urinorm(
        &["dedup", "-q", "--max-per-domain", "2", "--emit", "verdict"],
        FRONTIER.as_bytes(),
    );
    assert_eq!(
        verdicts
            .stdout
            .lines()
            .filter(|l| l.starts_with("capped\t"))
            .collect::<Vec<_>>(),
        [
            "capped\thttp://b.a.com/1",
            "capped\thttp://a.com/3",
            "capped\thttp://www.a.com/4"
        ]
    );
    let both = urinorm(
        &["dedup", "--max-per-host", "1", "--max-per-domain", "1"],
        b"",
    );
    assert_eq!(both.code, 2, "{}", both.stderr);
}

/// The naive oracle: the first `cap` distinct URIs of each host, in input
/// order, from lines `http://HOST/PATH` already canonical.
fn capped_by_hand(lines: &[String], cap: usize) -> (Vec<&str>, u64) {
    let (mut seen, mut per_host, mut kept, mut capped) =
        (HashSet::new(), HashMap::<&str, usize>::new(), Vec::new(), 0);
    for line in lines {
        if !seen.insert(line.as_str()) {
            continue;
        }
        let host = line["http://".len()..].split('/').next().unwrap();
        let n = per_host.entry(host).or_default();
        if *n < cap {
            *n += 1;
            kept.push(line.as_str());
        } else {
            capped += 1;
        }
    }
    (kept, capped)
}

#[test]
fn caps_agree_with_a_naive_oracle_in_memory_threaded_and_spilled() {
    let lines: Vec<String> = (0..60_000u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58;
            format!("http://h{h}.example.org/p{}", (i * 7919) % 20_011)
        })
        .collect();
    let input = lines.join("\n") + "\n";
    let (expected, capped) = capped_by_hand(&lines, 150);
    assert!(
        capped > 1_000,
        "the cap must bite for the test to mean anything"
    );
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().to_str().unwrap();
    for extra in [
        vec!["-j", "1"],
        vec!["-j", "2"],
        vec!["--memory-limit", "1", "--temp-dir", temp],
    ] {
        let mut args = vec!["dedup", "--max-per-host", "150"];
        args.extend(&extra);
        let (run, stats) = with_stats(&args, input.as_bytes());
        assert_eq!(run.code, 0, "{extra:?}: {}", run.stderr);
        assert_eq!(
            run.stdout.lines().collect::<Vec<_>>(),
            expected,
            "{extra:?}"
        );
        assert_eq!(stats["capped"], capped, "{extra:?}");
        assert_balances(&stats);
        let limited = extra.contains(&"--memory-limit");
        assert_eq!(
            stats["spill"].is_object(),
            limited,
            "{extra:?} spilled as asked"
        );
    }
}

#[test]
fn uris_the_seen_store_holds_use_none_of_the_budget_and_capped_ones_stay_new() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seen");
    let store = store.to_str().unwrap();
    let first = urinorm(
        &["dedup", "-q", "--seen", store],
        b"http://a.com/1\nhttp://a.com/2\n",
    );
    assert_eq!(first.code, 0, "{}", first.stderr);
    let batch = "http://a.com/1\nhttp://a.com/3\nhttp://a.com/2\nhttp://a.com/4\nhttp://a.com/5\n";
    let (run, stats) = with_stats(
        &["dedup", "--seen", store, "--max-per-host", "2"],
        batch.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "http://a.com/3\nhttp://a.com/4\n");
    assert_eq!(
        (stats["seen"].as_u64(), stats["capped"].as_u64()),
        (Some(2), Some(1))
    );
    assert_balances(&stats);
    assert_eq!(store_keys(store), 4, "the capped URI was not admitted");
    let next = urinorm(
        &["dedup", "-q", "--seen", store, "--max-per-host", "2"],
        batch.as_bytes(),
    );
    assert_eq!(next.stdout, "http://a.com/5\n");
}
