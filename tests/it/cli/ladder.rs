//! `urinorm ladder` against `urinorm dedup`: the same counts at every step
//! and of lines read, example merges that really are merges (at each step
//! and for each transform alone), each transform's risk as `explain` names
//! it, a preset beside the ladder, samples that take a share of every kind
//! of line, and JSON that parses.

use crate::common::cli::{urinorm, with_stats};
use serde_json::Value;

/// The shipped sample plus spellings that each step merges.
fn input() -> Vec<u8> {
    let mut bytes = std::fs::read(crate::common::testdata("sample/urls.txt")).unwrap();
    bytes.extend_from_slice(
        b"\nHTTPS://WWW.SEC.GOV/edgar.shtml\nhttps://www.sec.gov:443/edgar.shtml\nhttps://www.sec.gov/%65dgar.shtml\n\
          https://www.sec.gov/./edgar.shtml#top\nhttp://sec.gov/edgar.shtml?utm_source=x\nhttp://user:secret@example.com/a/\n\
          http://user:secret@EXAMPLE.com/a/\nnot a uri\n",
    );
    bytes
}

/// The lines `dedup` writes with these flags.
fn dedup_count(flags: &[&str], stdin: &[u8]) -> u64 {
    let mut args = vec!["dedup", "--quiet"];
    args.extend_from_slice(flags);
    urinorm(&args, stdin).stdout.lines().count() as u64
}

#[test]
fn counts_equal_dedup_at_every_step() {
    let input = input();
    let run = urinorm(&["ladder", "--json", "--examples", "3"], &input);
    assert_eq!(
        run.code, 1,
        "a line of the input is rejected: {}",
        run.stderr
    );
    let report: Value = serde_json::from_str(&run.stdout).expect("the report is JSON");
    let steps = report["steps"].as_array().unwrap();
    let flags: [(&str, &[&str]); 5] = [
        ("string", &["--rung", "string"]),
        ("syntax", &["--rung", "syntax"]),
        ("scheme", &["--rung", "scheme"]),
        ("protocol:safe", &["--preset", "safe"]),
        ("protocol:aggressive", &["--preset", "aggressive"]),
    ];
    assert_eq!(steps.len(), flags.len());
    for (step, (name, flags)) in steps.iter().zip(flags) {
        assert_eq!(step["name"], name);
        assert_eq!(
            step["distinct"].as_u64().unwrap(),
            dedup_count(flags, &input),
            "{name}"
        );
    }
    for pair in steps.windows(2) {
        let collapsed =
            pair[0]["distinct"].as_i64().unwrap() - pair[1]["distinct"].as_i64().unwrap();
        assert_eq!(pair[1]["collapsed"].as_i64().unwrap(), collapsed);
    }
    assert!(
        steps[2]["collapsed"].as_i64().unwrap() > 0,
        "the scheme rung merges the :443 spelling"
    );
    assert_eq!(report["attribution"].as_array().unwrap().len(), 14);
}

#[test]
fn example_merges_are_equal_at_their_step_and_distinct_below() {
    let input = input();
    let run = urinorm(&["ladder", "--json"], &input);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let steps = report["steps"].as_array().unwrap();
    let flags: [&[&str]; 5] = [
        &["--rung", "string"],
        &["--rung", "syntax"],
        &["--rung", "scheme"],
        &["--preset", "safe"],
        &["--preset", "aggressive"],
    ];
    let mut seen = 0;
    for (s, step) in steps.iter().enumerate().skip(1) {
        for merge in step["examples"].as_array().unwrap() {
            let spellings = spellings(merge);
            assert_eq!(spellings.len(), 2);
            let both = format!("{}\n{}\n", spellings[0], spellings[1]).into_bytes();
            assert_eq!(
                dedup_count(flags[s], &both),
                1,
                "equal at {}: {spellings:?}",
                step["name"]
            );
            assert_eq!(
                dedup_count(flags[s - 1], &both),
                2,
                "distinct below {}: {spellings:?}",
                step["name"]
            );
            assert!(!merge["joined_by"].as_array().unwrap().is_empty());
            seen += 1;
        }
    }
    assert!(seen >= 4, "{seen} examples");
    assert!(
        !run.stdout.contains("secret"),
        "passwords are masked (RFC 3986 §7.5)"
    );
}

#[test]
fn table_fits_80_columns_and_sampling_says_it_estimates() {
    let input = input();
    let run = urinorm(&["ladder", "--examples", "2"], &input);
    // Every line but those that quote a URI fits an 80-column terminal.
    let quotes_a_uri = |l: &str| l.starts_with("      ") || l.contains(" lines -> ");
    assert!(
        run.stdout
            .lines()
            .filter(|l| !quotes_a_uri(l))
            .all(|l| l.chars().count() <= 80),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("protocol:aggressive"));
    let sampled = urinorm(&["ladder", "--sample", "0.5"], &input);
    assert!(
        sampled
            .stdout
            .starts_with("ESTIMATE from a 50.0% sample of hosts"),
        "{}",
        sampled.stdout
    );
    let bad = urinorm(&["ladder", "--sample", "2"], &input);
    assert_eq!(bad.code, 2);
}

#[test]
fn attribution_equals_dedup_with_each_transform_alone() {
    use urinorm::normalize::protocol::Transform;
    let input = attribution_input();
    let run = urinorm(&["ladder", "--json"], &input);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let scheme = dedup_count(&["--rung", "scheme"], &input) as i64;
    let attribution = report["attribution"].as_array().unwrap();
    let mut merging = 0;
    for row in attribution {
        let name = row["transform"].as_str().unwrap();
        let flags = alone_flags(name);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let alone = dedup_count(&flags, &input) as i64;
        assert_eq!(row["merges"].as_i64().unwrap(), scheme - alone, "{name}");
        merging += usize::from(scheme > alone);
        assert!(name.parse::<Transform>().is_ok());
    }
    assert!(merging >= 7, "{merging} transforms merge something here");
}

/// `dedup`'s flags for the scheme rung and transform `name` alone: the
/// safe preset without its own transforms, plus this one.
fn alone_flags(name: &str) -> Vec<String> {
    use urinorm::normalize::protocol::PRESETS;
    let mut flags = vec!["--preset".to_string(), "safe".to_string()];
    for t in PRESETS[0].transforms().filter(|t| t.name() != name) {
        flags.extend(["--without".to_string(), t.name().to_string()]);
    }
    flags.extend(["--with".to_string(), name.to_string()]);
    flags
}

/// The input of the attribution tests: the sample, and spellings that
/// each of many transforms merges.
fn attribution_input() -> Vec<u8> {
    let mut input = input();
    input.extend_from_slice(
        b"http://www.a.example/x/index.html\nhttp://a.example/x/\nhttp://a.example/x?b=1&a=2\n\
          http://a.example/x?a=2&b=1\nhttp://a.example/x?\nhttp://a.example//x\nhttp://a.example/x#f\n\
          http://a.example/x\nhttp://a.example/x/index.html\nhttp://a.example/x#g\nhttp://a.example/x#h\n",
    );
    input
}

#[test]
fn each_transform_shows_its_largest_merges_alone() {
    let input = attribution_input();
    let run = urinorm(&["ladder", "--json", "--examples", "2"], &input);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut shown = 0;
    for row in report["attribution"].as_array().unwrap() {
        let name = row["transform"].as_str().unwrap();
        let examples = row["examples"].as_array().unwrap();
        // Every transform that merges shows merges, at most --examples.
        assert_eq!(
            row["merges"].as_i64().unwrap() > 0,
            !examples.is_empty(),
            "{name}"
        );
        assert!(examples.len() <= 2, "{name}");
        let flags = alone_flags(name);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let sizes: Vec<u64> = examples
            .iter()
            .map(|m| m["size"].as_u64().unwrap())
            .collect();
        assert!(
            sizes.windows(2).all(|w| w[0] >= w[1]),
            "largest first: {sizes:?}"
        );
        for merge in examples {
            let spellings = spellings(merge);
            let both = format!("{}\n{}\n", spellings[0], spellings[1]).into_bytes();
            assert_eq!(dedup_count(&flags, &both), 1, "{name} merges {spellings:?}");
            assert_eq!(
                dedup_count(&["--rung", "scheme"], &both),
                2,
                "distinct at the scheme rung: {spellings:?}"
            );
            assert_eq!(merge["joined_by"], serde_json::json!([name]));
            shown += 1;
        }
    }
    assert!(shown >= 7, "{shown} examples");
    // The table shows them too, under each transform's name.
    let table = urinorm(&["ladder", "--examples", "2"], &input).stdout;
    for name in [
        "drop-fragment",
        "sort-query",
        "drop-index-file",
        "https-upgrade",
    ] {
        assert!(
            table.contains(&format!(
                "Largest merges of {name} alone, over the scheme rung:"
            )),
            "{table}"
        );
    }
}

#[test]
fn each_transforms_risk_is_the_one_explain_names() {
    let input = attribution_input();
    let report: Value =
        serde_json::from_str(&urinorm(&["ladder", "--json"], &input).stdout).unwrap();
    let table = urinorm(&["ladder"], &input).stdout;
    let explained = urinorm(
        &[
            "explain",
            "HTTP://user@www.example.com:80//a/index.html?utm_source=x&b=&a=1#f",
            "--preset",
            "aggressive",
        ],
        b"",
    )
    .stdout;
    let mut named = 0;
    for row in report["attribution"].as_array().unwrap() {
        let (name, risk) = (
            row["transform"].as_str().unwrap(),
            row["risk"].as_str().unwrap(),
        );
        assert!(!risk.is_empty(), "{name}");
        // The table shows the risk beside the merges, wrapped to fit.
        let first_words = risk.split(' ').take(2).collect::<Vec<_>>().join(" ");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("  {name} ")) && l.contains(&first_words)),
            "{name}: {table}"
        );
        // explain says `name: what it does; risk` for each transform it ran.
        if let Some(line) = explained
            .lines()
            .find(|l| l.contains(&format!("- {name}: ")))
        {
            assert!(line.ends_with(&format!("; {risk}")), "{line} / {risk}");
            named += 1;
        }
    }
    assert!(named >= 6, "{named} transforms explained: {explained}");
}

#[test]
fn a_sample_takes_a_share_of_the_lines_without_a_host() {
    // As many rejected lines, and lines without a host, as lines of sites.
    let mut lines = String::new();
    for i in 0..400 {
        lines += &format!("not a uri {i}\nhttp://site{i}.example/\nmailto:a{i}@example.com\n");
    }
    let count = |fraction: &str| {
        let run = urinorm(
            &["ladder", "--json", "--sample", fraction],
            lines.as_bytes(),
        );
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        let rejected = report["steps"][0]["rejected"].as_u64().unwrap();
        let looked_at = report["lines"].as_u64().unwrap();
        assert_eq!(
            looked_at + report["left_out"].as_u64().unwrap(),
            report["lines_read"].as_u64().unwrap()
        );
        assert_eq!(report["lines_read"].as_u64(), Some(1200));
        (rejected, looked_at - rejected)
    };
    let (rejected, accepted) = count("0.5");
    // The hash is stable: these bounds are many deviations wide.
    assert!(
        0 < rejected && rejected < 400,
        "{rejected} of 400 rejected lines"
    );
    assert!(
        (100..300).contains(&rejected),
        "{rejected} of 400 rejected lines"
    );
    assert!(
        (300..500).contains(&accepted),
        "{accepted} of 800 accepted lines"
    );
    let (few, _) = count("0.1");
    let (most, _) = count("0.9");
    assert!(
        0 < few && few < rejected && rejected < most && most < 400,
        "{few} {rejected} {most}"
    );
    let table = urinorm(&["ladder", "--sample", "0.5"], lines.as_bytes()).stdout;
    assert!(
        table.contains("1200 lines read: ") && table.contains(" looked at (in the sample), "),
        "{table}"
    );
}

#[test]
fn lines_read_are_the_lines_dedup_reads() {
    let sample = crate::common::testdata("sample/urls.txt");
    let sample = sample.to_str().unwrap();
    let (_, stats) = with_stats(&["dedup", "--quiet", sample], b"");
    let report: Value =
        serde_json::from_str(&urinorm(&["ladder", "--json", sample], b"").stdout).unwrap();
    assert_eq!(report["lines_read"], stats["lines"]);
    let table = urinorm(&["ladder", sample], b"").stdout;
    let lines = stats["lines"].as_u64().unwrap();
    assert!(
        table.starts_with(&format!("{lines} lines read: {lines} looked at, 0 blank\n")),
        "{table}"
    );
    // Blank lines, a header and a binary file are read, not looked at.
    let dir = tempfile::tempdir().unwrap();
    let listed = dir.path().join("list.txt");
    std::fs::write(&listed, "url\nhttp://a/\n\nhttp://b/\n\n\nhttp://a/\n").unwrap();
    let binary = dir.path().join("a.out");
    std::fs::write(
        &binary,
        b"\x7fELF\x00\x01\n\x00\x02\nend\n\x00\x03\n".repeat(64),
    )
    .unwrap();
    let files = [listed.to_str().unwrap(), binary.to_str().unwrap(), sample];
    let mut args = vec!["--header"];
    args.extend(files);
    let (_, stats) = with_stats(&[&["dedup", "--quiet"][..], &args].concat(), b"");
    let run = urinorm(&[&["ladder", "--json"][..], &args].concat(), b"");
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["lines_read"], stats["lines"], "{}", run.stderr);
    assert_eq!(report["blank"], stats["blank"]);
    assert_eq!(report["binary"], stats["binary_lines"]);
    assert_eq!(report["header"], stats["header"]);
    assert_eq!(report["header"].as_u64(), Some(2), "one a text file");
    let parts = ["lines", "left_out", "blank", "header", "binary"];
    let sum: u64 = parts.iter().map(|p| report[p].as_u64().unwrap()).sum();
    assert_eq!(Some(sum), report["lines_read"].as_u64());
    let table = urinorm(&[&["ladder"][..], &args].concat(), b"").stdout;
    let first = table.lines().next().unwrap();
    assert!(
        first.ends_with(&format!(
            ", 3 blank, 2 header, {} in binary files",
            report["binary"]
        )),
        "{first}"
    );
}

#[test]
fn a_preset_beside_the_ladder_is_counted_as_dedup_counts_it() {
    let mut input = input();
    // IA merges what no other preset does (www2., the path's case), and
    // rejects what a crawler cannot fetch.
    input.extend_from_slice(b"http://www2.sec.gov/Edgar.shtml\nwww.sec.gov/\nhttp:foo\n");
    let run = urinorm(&["ladder", "--json", "--preset", "ia"], &input);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let steps = report["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "string",
            "syntax",
            "scheme",
            "protocol:safe",
            "protocol:aggressive",
            "protocol:ia"
        ]
    );
    let ia = &steps[5];
    assert_eq!(
        ia["over"], "scheme",
        "beside the ladder, over the scheme rung"
    );
    assert_eq!(
        ia["distinct"].as_u64().unwrap(),
        dedup_count(&["--preset", "ia"], &input)
    );
    assert_eq!(
        ia["collapsed"].as_i64().unwrap(),
        steps[2]["distinct"].as_i64().unwrap() - ia["distinct"].as_i64().unwrap()
    );
    let (_, stats) = with_stats(&["dedup", "--quiet", "--preset", "ia"], &input);
    assert_eq!(
        ia["rejected"], stats["rejected"],
        "what a crawler cannot fetch too"
    );
    assert!(ia["rejected"].as_u64() > steps[2]["rejected"].as_u64());
    // Its examples are merges at ia, distinct at the scheme rung.
    let examples = ia["examples"].as_array().unwrap();
    assert!(!examples.is_empty());
    for merge in examples {
        let spellings = merge["spellings"].as_array().unwrap();
        let both = format!(
            "{}\n{}\n",
            spellings[0].as_str().unwrap(),
            spellings[1].as_str().unwrap()
        );
        assert_eq!(
            dedup_count(&["--preset", "ia"], both.as_bytes()),
            1,
            "{both}"
        );
        assert_eq!(
            dedup_count(&["--rung", "scheme"], both.as_bytes()),
            2,
            "{both}"
        );
    }
    let table = urinorm(&["ladder", "--preset", "ia"], &input).stdout;
    assert!(
        table.contains("(protocol:ia is beside the ladder: collapsed over scheme)"),
        "{table}"
    );
    // A preset the ladder shows adds nothing, and says so.
    let plain = report_of(&["ladder", "--json"], &input);
    for preset in ["safe", "aggressive"] {
        let run = urinorm(&["ladder", "--json", "--preset", preset], &input);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "--preset {preset}: the ladder shows it already (step protocol:{preset}); no step added"
            )),
            "{}",
            run.stderr
        );
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(without_times(report), plain);
    }
    let unknown = urinorm(&["ladder", "--preset", "nope"], &input);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("choose safe, aggressive or ia"),
        "{}",
        unknown.stderr
    );
}

/// The JSON report of a run, without its timings.
fn report_of(args: &[&str], stdin: &[u8]) -> Value {
    without_times(serde_json::from_str(&urinorm(args, stdin).stdout).unwrap())
}

/// The report without its timings, which differ from run to run, and the
/// command line and inputs it was run with.
fn without_times(mut report: Value) -> Value {
    report["seconds"] = Value::Null;
    report["run"] = Value::Null;
    for step in report["steps"].as_array_mut().unwrap() {
        step["seconds"] = Value::Null;
    }
    report
}

fn report(args: &[&str], stdin: &[u8]) -> Value {
    let run = urinorm(args, stdin);
    let report: Value = serde_json::from_str(&run.stdout).expect("the report is JSON");
    // 1 exactly when lines are rejected (the string step rejects what no
    // step accepts).
    let rejected = report["steps"][0]["rejected"].as_u64().unwrap();
    assert_eq!(
        run.code,
        i32::from(rejected > 0),
        "{args:?}: {}",
        run.stderr
    );
    without_times(report)
}

#[test]
fn standard_input_is_streamed_to_the_same_report_as_a_file() {
    // Over 1 MiB, so the stream arrives in several chunks, and a file
    // before and after it.
    let sample = input();
    let mut big = Vec::new();
    for i in 0..8 {
        big.extend_from_slice(&sample);
        big.extend_from_slice(format!("http://example.com/{i}\n").as_bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    std::fs::write(&file, &big).unwrap();
    let sample_path = crate::common::testdata("sample/urls.txt");
    let (file, sample_path) = (file.to_str().unwrap(), sample_path.to_str().unwrap());
    let from_files = report(&["ladder", "--json", sample_path, file, sample_path], b"");
    let streamed = report(&["ladder", "--json", sample_path, "-", sample_path], &big);
    assert_eq!(from_files, streamed);
    assert!(from_files["steps"][1]["examples"].as_array().unwrap().len() > 1);
}

#[test]
fn columns_bases_and_repairs_are_measured_as_dedup_cleans_them() {
    let links = b"http://a/b/c\t../d\n\
                  http://a/x/\t../d\n\
                  http://A/b/\tHTTP://a:80/d#f\n\
                  http://a/\t <http://a/%64> \n\
                  http://a/\tg h\n\
                  http://a/\t//b/?utm_source=x\n\
                  http://a/\t//B/\n\
                  only-one-column\n";
    let columns = ["--field", "2", "--base-field", "1", "--lenient"];
    let mut args = vec!["ladder", "--json"];
    args.extend_from_slice(&columns);
    let report = report(&args, links);
    let steps = report["steps"].as_array().unwrap();
    for (step, rung) in [
        (&steps[0], &["--rung", "string"][..]),
        (&steps[1], &["--rung", "syntax"]),
        (&steps[2], &["--rung", "scheme"]),
        (&steps[3], &["--preset", "safe"]),
    ] {
        let mut flags = columns.to_vec();
        flags.extend_from_slice(rung);
        assert_eq!(
            step["distinct"].as_u64().unwrap(),
            dedup_count(&flags, links),
            "{}",
            step["name"]
        );
    }
    assert_eq!(steps[0]["rejected"], 1, "the line without a second column");
    // The spellings are the URIs as resolved and repaired, not the lines.
    let spellings: Vec<&str> = steps
        .iter()
        .flat_map(|s| s["examples"].as_array().unwrap())
        .flat_map(|m| m["spellings"].as_array().unwrap())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(spellings.contains(&"http://a/%64"), "{spellings:?}");
    assert!(spellings.iter().all(|s| !s.contains('\t')), "{spellings:?}");
}

#[test]
fn lines_over_the_limit_are_rejected_at_every_step() {
    let long = format!("http://a/{}\nhttp://a/\nhttp://A/\n", "x".repeat(100));
    let report = report(
        &["ladder", "--json", "--max-line-bytes", "50"],
        long.as_bytes(),
    );
    let steps = report["steps"].as_array().unwrap();
    assert!(steps.iter().all(|s| s["rejected"] == 1), "{steps:?}");
    assert_eq!(steps[0]["distinct"], 2);
    assert_eq!(steps[1]["distinct"], 1);
}

#[test]
fn hosts_and_domains_equal_dedup_by_host_and_by_domain() {
    let sites = b"http://WWW.Example.com/a\nhttp://www.example.com/b\nhttp://news.bbc.co.uk/\n\
http://www.bbc.co.uk/x\nmailto:a@b.c\nhttp://1.2.3.4/\nhttp://foo.github.io/\nhttp://bar.github.io/\n\
http://www.example.com/a\n";
    let run = urinorm(&["ladder", "--json", "--top-hosts", "3"], sites);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (report["hosts"].as_u64(), report["domains"].as_u64()),
        (Some(6), Some(5))
    );
    assert_eq!(
        report["top_hosts"],
        serde_json::json!([
            {"host": "www.example.com", "lines": 3},
            {"host": "1.2.3.4", "lines": 1},
            {"host": "bar.github.io", "lines": 1},
        ])
    );
    // The same counts as deduplicating by host and by domain (the line
    // without a host is rejected there).
    assert_eq!(dedup_count(&["--key", "host"], sites), 6);
    assert_eq!(dedup_count(&["--key", "domain"], sites), 5);
    // On the whole sample too.
    let input = input();
    let report: Value =
        serde_json::from_str(&urinorm(&["ladder", "--json"], &input).stdout).unwrap();
    assert_eq!(
        report["hosts"].as_u64(),
        Some(dedup_count(&["--key", "host"], &input))
    );
    assert_eq!(
        report["domains"].as_u64(),
        Some(dedup_count(&["--key", "domain"], &input))
    );
    let table = urinorm(&["ladder"], sites).stdout;
    assert!(
        table.contains("6 distinct hosts, 5 distinct registrable domains"),
        "{table}"
    );
}

/// The spellings of an example merge in the JSON report.
fn spellings(merge: &serde_json::Value) -> Vec<&str> {
    merge["spellings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}
