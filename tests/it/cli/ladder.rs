//! `urinorm ladder` against `urinorm dedup`: the same counts at every step,
//! example merges that really are merges, and JSON that parses.

use crate::common::cli::urinorm;
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
            let spellings: Vec<&str> = merge["spellings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
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
    use urinorm::normalize::protocol::{PRESETS, Transform};
    let mut input = input();
    input.extend_from_slice(
        b"http://www.a.example/x/index.html\nhttp://a.example/x/\nhttp://a.example/x?b=1&a=2\n\
          http://a.example/x?a=2&b=1\nhttp://a.example/x?\nhttp://a.example//x\nhttp://a.example/x#f\n\
          http://a.example/x\nhttp://a.example/x/index.html\n",
    );
    let run = urinorm(&["ladder", "--json"], &input);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let scheme = dedup_count(&["--rung", "scheme"], &input) as i64;
    let attribution = report["attribution"].as_array().unwrap();
    let mut merging = 0;
    for row in attribution {
        let name = row["transform"].as_str().unwrap();
        // The safe preset without its own transforms, plus this one.
        let mut flags = vec!["--preset".to_string(), "safe".to_string()];
        for t in PRESETS[0].transforms().filter(|t| t.name() != name) {
            flags.extend(["--without".to_string(), t.name().to_string()]);
        }
        flags.extend(["--with".to_string(), name.to_string()]);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let alone = dedup_count(&flags, &input) as i64;
        assert_eq!(row["merges"].as_i64().unwrap(), scheme - alone, "{name}");
        merging += usize::from(scheme > alone);
        assert!(name.parse::<Transform>().is_ok());
    }
    assert!(merging >= 7, "{merging} transforms merge something here");
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
