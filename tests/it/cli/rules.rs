//! Site rules run the way an operator runs them: `--rules` files in
//! urinorm's line format and `--rules-clearurls` files in ClearURLs'
//! format (testdata/rules/), their effect on each line, the counts, the
//! rejections they cause, the errors in their files, and `explain`.

use crate::common::cli::{accounted, urinorm, with_stats};
use crate::common::testdata;

fn path(name: &str) -> String {
    testdata(&format!("rules/{name}")).display().to_string()
}

/// `normalize --aligned` with these flags: one output line per input line.
fn normalized(flags: &[&str], lines: &[&str]) -> Vec<String> {
    let mut args = vec!["normalize", "--aligned"];
    args.extend_from_slice(flags);
    let input = lines.join("\n") + "\n";
    let (run, _) = accounted(&args, input.as_bytes());
    run.stdout.lines().map(str::to_string).collect()
}

#[test]
fn each_action_and_host_pattern_kind() {
    let rules = path("site.rules");
    let cases = [
        // amazon.com: the domain and its subdomains, on label boundaries.
        (
            "https://www.amazon.com/dp/1?pf_rd_p=2&ref=x&q=1",
            "https://www.amazon.com/dp/1?q=1",
        ),
        (
            "https://smile.amazon.com/?REF=x",
            "https://smile.amazon.com/",
        ),
        (
            "https://notamazon.com/?ref=x",
            "https://notamazon.com/?ref=x",
        ),
        // =shop.example: that host only.
        (
            "http://shop.example/a?x=1&id=2&y",
            "http://shop.example/a?id=2",
        ),
        (
            "http://a.shop.example/a?x=1&id=2",
            "http://a.shop.example/a?x=1&id=2",
        ),
        // rewrite-path with a group.
        (
            "http://news.example/amp/a/b?spm=1",
            "http://news.example/a/b",
        ),
        ("http://news.example/a", "http://news.example/a"),
        // *: every host.
        (
            "http://elsewhere.example/?spm=1&q",
            "http://elsewhere.example/?q",
        ),
        // lowercase-path, the hex digits of %XX kept.
        (
            "http://wiki.example/Main_Page/%C3%A9?Q=A",
            "http://wiki.example/main_page/%C3%A9?Q=A",
        ),
        // Other schemes pass through.
        ("ftp://amazon.com/?ref=x", "ftp://amazon.com/?ref=x"),
    ];
    let inputs: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let got = normalized(&["--rules", &rules], &inputs);
    for ((input, expected), got) in cases.iter().zip(&got) {
        assert_eq!(got, expected, "{input}");
    }
}

#[test]
fn rules_follow_the_preset_transforms() {
    // strip-www runs first, so `www.amazon.com` is matched as `amazon.com`;
    // sort-query orders what the rule leaves.
    let got = normalized(
        &["--preset", "aggressive", "--rules", &path("site.rules")],
        &["http://www.amazon.com/dp/?z=1&ref=2&a=3&utm_source=x"],
    );
    assert_eq!(got, ["https://amazon.com/dp?a=3&z=1"]);
}

#[test]
fn a_rule_that_breaks_a_line_rejects_it_naming_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("bad-result.rules");
    std::fs::write(
        &rules,
        "# rules whose results are not fixed points or not URIs\n\
         loop.example rewrite-path ^/a/ /a/a/\n\
         space.example rewrite-path ^/x /x\\x20y\n\
         pct.example rewrite-path ^/t$ /%7e\n",
    )
    .unwrap();
    let rules = rules.display().to_string();
    let input = "http://loop.example/a/b\nhttp://space.example/x\nhttp://pct.example/t\nhttp://ok.example/a/b\n";
    let (run, stats) = with_stats(&["normalize", "--rules", &rules], input.as_bytes());
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stdout, "http://ok.example/a/b\n");
    let rejected = &stats["rejected_by_reason"];
    let name = |line: u32, action: &str| format!("rule {rules}:{line} {action}");
    assert_eq!(
        rejected[format!(
            "{} gives a URI that normalizing again changes",
            name(2, "rewrite-path")
        )],
        1,
        "{stats}"
    );
    // `/x y` is no URI; `/%7e` normalizes again to `/~`.
    assert_eq!(
        rejected[format!("{} makes the URI invalid", name(3, "rewrite-path"))],
        1,
        "{stats}"
    );
    assert_eq!(
        rejected[format!(
            "{} gives a URI that normalizing again changes",
            name(4, "rewrite-path")
        )],
        1,
        "{stats}"
    );
    assert!(
        run.stderr.contains(":1: rule "),
        "each rejection names its line: {}",
        run.stderr
    );
}

/// Writes `text` to `file`, runs `normalize FLAG file`, and checks it was
/// refused: exit 2, nothing written. Returns the file's name and the run.
fn refused(flag: &str, file: &std::path::Path, text: &str) -> (String, crate::common::cli::Run) {
    std::fs::write(file, text).unwrap();
    let file = file.display().to_string();
    let run = urinorm(&["normalize", flag, &file], b"http://a/\n");
    assert_eq!(run.code, 2, "{text:?}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{text:?}");
    (file, run)
}

#[test]
fn every_rules_file_error_is_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("a.example frob x\n", ":1: unknown action 'frob'"),
        (
            "\n# c\n*.a.example drop-params x\n",
            ":3: bad host pattern '*.a.example'",
        ),
        (
            "a.example rewrite-path ^/(x /$1\n",
            ":1: bad regular expression '^/(x': unclosed group",
        ),
        (
            "a.example rewrite-path ^/(x) /$2\n",
            ":1: the replacement '/$2' names group '2'",
        ),
        (
            "a.example drop-params\n",
            ":1: drop-params needs at least one parameter name",
        ),
        ("a.example\n", ":1: a host pattern needs an action after it"),
        (
            "a.example frob\x1b[31m\n",
            ":1: unknown action 'frob\\x1b[31m'",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let (file, run) = refused("--rules", &dir.path().join(format!("r{i}.rules")), text);
        assert!(
            run.stderr.contains(&format!("{file}{expected}")),
            "{text:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains('\x1b'), "control bytes are escaped");
    }
    let missing = urinorm(&["normalize", "--rules", "/nonexistent/x.rules"], b"");
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("x.rules"), "{}", missing.stderr);
    let lower = urinorm(
        &[
            "normalize",
            "--rung",
            "scheme",
            "--rules",
            &path("site.rules"),
        ],
        b"",
    );
    assert_eq!(lower.code, 2);
    assert!(
        lower.stderr.contains("need the protocol rung"),
        "{}",
        lower.stderr
    );
}

#[test]
fn clearurls_file_each_field() {
    let file = path("clearurls.json");
    let cases = [
        // globalRules (pattern `.*`): every URI; its exception spares one host.
        (
            "http://a.example/?utm_source=x&utm_medium=y&q=1",
            "http://a.example/?q=1",
        ),
        (
            "http://www.exempt.example/?utm_source=x",
            "http://www.exempt.example/?utm_source=x",
        ),
        // rules (whole name, case-insensitive), referralMarketing, rawRules.
        (
            "https://www.store.example/item/ref=sr_1_1?tag=aff&REF=x&refer=y",
            "https://www.store.example/item?refer=y",
        ),
        (
            "https://store.example/?pd_rd_w=1&pd_rd_x=2&id=3",
            "https://store.example/?id=3",
        ),
        // A provider exception: the cart is left alone (globalRules still applies).
        (
            "https://store.example/cart?ref=x&utm_source=y",
            "https://store.example/cart?ref=x",
        ),
        // Query names matched decoded, as the add-on's URLSearchParams reads them.
        (
            "https://store.example/?p%64_rd_w=1&id=3",
            "https://store.example/?id=3",
        ),
        // A redirection: counted, not followed, and the provider does no more.
        (
            "https://search.example/url?q=https%3A%2F%2Fx.example&sa=1",
            "https://search.example/url?q=https%3A%2F%2Fx.example&sa=1",
        ),
        (
            "https://search.example/search?q=a&sa=1&ved=2",
            "https://search.example/search?q=a",
        ),
        // completeProvider: counted, passed on unchanged by it.
        (
            "https://ads.tracker.example/pixel?id=1",
            "https://ads.tracker.example/pixel?id=1",
        ),
        // Fragment parameters too; an emptied fragment goes.
        (
            "https://spa.example/#session=1&view=2",
            "https://spa.example/#view=2",
        ),
        ("https://spa.example/p#session=1", "https://spa.example/p"),
    ];
    let inputs: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let input = inputs.join("\n") + "\n";
    let (run, stats) = with_stats(
        &[
            "normalize",
            "--aligned",
            "--rung",
            "protocol",
            "--without",
            "drop-fragment",
            "--without",
            "drop-tracking-params",
            "--rules-clearurls",
            &file,
        ],
        input.as_bytes(),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    for ((input, expected), got) in cases.iter().zip(run.stdout.lines()) {
        assert_eq!(got, *expected, "{input}");
    }
    let rules = &stats["rules"];
    assert_eq!(rules["clearurls-redirection"], 1, "{stats}");
    assert_eq!(rules["clearurls-complete-provider"], 1, "{stats}");
    assert_eq!(rules["changed-by-rules"], 8, "{stats}");
}

#[test]
fn clearurls_file_errors_name_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "{\"providers\":{\"x\":{\"urlPattern\":\"(a\"}}}",
            "provider 'x': urlPattern: bad regular expression '(a'",
        ),
        (
            "{\"providers\":{\"x\":{\"rules\":[\"(?!a)b\"]}}}",
            "provider 'x': rules[0]: bad regular expression '(?!a)b': look-around",
        ),
        (
            "{\"providers\":{\"x\":{\"rules\":\"a\"}}}",
            "provider 'x': 'rules' is not a list of strings",
        ),
        (
            "{\"providers\":{\"x\":{\"completeProvider\":1}}}",
            "provider 'x': 'completeProvider' is not true or false",
        ),
        ("{\"other\":{}}", "it has no \"providers\""),
        (
            "{\"providers\":\n{\"x\":}}",
            ":2: not a ClearURLs rules file",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let (file, run) = refused(
            "--rules-clearurls",
            &dir.path().join(format!("c{i}.json")),
            text,
        );
        assert!(
            run.stderr.contains(&file) && run.stderr.contains(expected),
            "{text}: {}",
            run.stderr
        );
    }
}

#[test]
fn clearurls_providers_apply_before_the_line_rules() {
    // The line rules see what ClearURLs left: `spm` is gone by globalRules,
    // so `site.rules`' `*` rule finds nothing to drop and is not named.
    let run = urinorm(
        &[
            "explain",
            "--rules-clearurls",
            &path("clearurls.json"),
            "--rules",
            &path("site.rules"),
            "http://www.amazon.com/?spm=1&ref=2&utm_source=3",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let protocol = run.stdout.split("protocol ").nth(1).unwrap();
    assert!(
        protocol.starts_with(" http://www.amazon.com/   "),
        "{}",
        run.stdout
    );
    let clearurls = protocol
        .find("clearurls.json provider globalRules")
        .expect("ClearURLs named");
    let line_rule = protocol
        .find("site.rules:2 drop-params")
        .expect("the line rule named");
    assert!(clearurls < line_rule, "{}", run.stdout);
    assert!(!protocol.contains("site.rules:5"), "{}", run.stdout);
}

#[test]
fn a_seen_store_refuses_keys_made_under_other_rules() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("seen").display().to_string();
    let dedup = |rules: &std::path::Path, line: &[u8]| {
        urinorm(
            &[
                "dedup",
                "--seen",
                &store,
                "--rules",
                &rules.display().to_string(),
            ],
            line,
        )
    };
    let first = dedup(&testdata("rules/site.rules"), b"http://a.example/?spm=1\n");
    assert_eq!(first.code, 0, "{}", first.stderr);
    let other = dir.path().join("other.rules");
    std::fs::write(&other, "* drop-params q\n").unwrap();
    let second = dedup(&other, b"http://a.example/?spm=1\n");
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(second.stderr.contains("rules"), "{}", second.stderr);
    // The same rules by another path are the same rules.
    let copy = dir.path().join("copy.rules");
    std::fs::copy(testdata("rules/site.rules"), &copy).unwrap();
    let third = dedup(&copy, b"http://a.example/\n");
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert_eq!(third.stdout, "", "the key was admitted by the first run");
}

#[test]
fn ladder_attributes_merges_to_rules_files() {
    let lines = "https://www.amazon.com/dp/1?pf_rd_p=2&ref=x&q=1\nhttps://www.amazon.com/dp/1?q=1\n\
                 http://news.example/amp/a\nhttp://news.example/a\nhttp://news.example/amp/amp/a\n\
                 https://store.example/?tag=1&id=3\nhttps://store.example/?id=3\nhttp://other.example/\n";
    let (site, clearurls) = (path("site.rules"), path("clearurls.json"));
    let rules = [
        "--rules",
        site.as_str(),
        "--rules-clearurls",
        clearurls.as_str(),
    ];
    let mut args = vec!["ladder", "--json", "-q"];
    args.extend(rules);
    let run = urinorm(&args, lines.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let step = report["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(step["name"], "+rules");
    // The step's classes are what dedup makes with the same rules.
    let mut dedup = vec!["dedup", "--preset", "aggressive"];
    dedup.extend(rules);
    let deduped = urinorm(&dedup, lines.as_bytes());
    assert_eq!(
        step["distinct"],
        deduped.stdout.lines().count() as u64,
        "{}",
        deduped.stdout
    );
    assert_eq!(step["rejected"], 1, "the rewrite that is not a fixed point");
    let joined: Vec<&str> = step["examples"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["joined_by"].as_array().unwrap())
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        joined.contains(&format!("{site}:2 drop-params").as_str()),
        "{joined:?}"
    );
    assert!(
        joined.contains(&format!("{clearurls} provider store").as_str()),
        "{joined:?}"
    );
    // Each file alone, over the scheme rung: site.rules merges the amazon
    // pair and the news pair; the ClearURLs file the store pair.
    let attribution = &report["rules_attribution"];
    assert_eq!(attribution[0]["rules"], clearurls.as_str());
    assert_eq!(attribution[0]["merges"], 1, "{attribution}");
    assert_eq!(attribution[1]["rules"], site.as_str());
    assert_eq!(attribution[1]["merges"], 2, "{attribution}");
}
