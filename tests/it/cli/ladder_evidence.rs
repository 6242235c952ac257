//! `urinorm ladder` on a crawl index: on indexes `scripts/make-crawl-index`
//! generates, every step's false and missed merges, pairs and lines equal
//! what the generator planted (in CDX with and without its header, CDXJ,
//! `url<TAB>digest` lines, gzip); statuses, revisits and redirects count
//! as they should; a page that changed stays one content; headers name the
//! fields; hostile fields are escaped; mistakes are usage errors.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::common::cli::urinorm;
use serde_json::Value;

/// Generates an index in `format` into `dir`, returning its path and the
/// generator's truth.
fn generate(dir: &Path, format: &str, seed: u32, sites: u32) -> (String, Value) {
    generate_with(dir, format, seed, sites, &[])
}

/// [`generate`] with the generator's `flags` too.
fn generate_with(
    dir: &Path,
    format: &str,
    seed: u32,
    sites: u32,
    flags: &[&str],
) -> (String, Value) {
    let out = dir.join(format!("index.{format}"));
    let truth = dir.join(format!("truth.{format}.json"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/make-crawl-index");
    let status = Command::new("python3")
        .arg(script)
        .arg(&out)
        .args(["--format", format, "--seed", &seed.to_string()])
        .args(["--sites", &sites.to_string(), "--pages", "30"])
        .args(flags)
        .arg("--truth")
        .arg(&truth)
        .status()
        .expect("python3 runs the generator");
    assert!(status.success());
    let truth = serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap();
    (out.to_str().unwrap().to_string(), truth)
}

/// The report of `ladder --json` with `flags` on `file`.
fn report(flags: &[&str], file: &str) -> Value {
    report_exiting(flags, file, 0)
}

/// The same, from a run that exits with `code`.
fn report_exiting(flags: &[&str], file: &str, code: i32) -> Value {
    let mut args = vec!["ladder", "--json", "--quiet"];
    args.extend_from_slice(flags);
    args.push(file);
    let run = urinorm(&args, b"");
    assert_eq!(run.code, code, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("the report is JSON")
}

/// Asserts that every judged step's numbers are the truth's.
fn assert_judged_as_planted(report: &Value, truth: &Value, what: &str) {
    let planted = truth["steps"].as_object().unwrap();
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), planted.len(), "{what}");
    for step in steps {
        let name = step["name"].as_str().unwrap();
        let evidence = &step["evidence"];
        for (field, value) in planted[name].as_object().unwrap() {
            assert_eq!(&evidence[field], value, "{what}: {name}: {field}");
        }
    }
    let aggressive = &steps[4]["evidence"];
    assert!(
        aggressive["false_merges"].as_u64().unwrap() > 0,
        "{what}: false pairs planted"
    );
    assert!(
        aggressive["missed"].as_u64().unwrap() > 0,
        "{what}: ignored parameters planted"
    );
}

#[test]
fn generated_indexes_are_judged_as_planted_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for (format, flags) in [
        ("cdx", &["--cdx"][..]),
        ("cdx-bare", &["--cdx"]),
        ("cdxj", &["--cdxj"]),
        ("tsv", &["--digest-field", "2"]),
    ] {
        let (file, truth) = generate(dir.path(), format, 11, 20);
        assert_judged_as_planted(&report(flags, &file), &truth, format);
    }
    // Another seed, compressed: read as every input is.
    let (file, truth) = generate(dir.path(), "cdxj", 5, 30);
    let gz = format!("{file}.gz");
    std::fs::write(&gz, gzipped(&std::fs::read(&file).unwrap())).unwrap();
    assert_judged_as_planted(&report(&["--cdxj"], &gz), &truth, "cdxj.gz");
}

/// The step of `order` with the most right pairs among the truth's steps
/// with at most `tolerance` false merges (the first of equals).
fn best_planted(truth: &Value, order: &[&str], tolerance: u64) -> String {
    let planted = |name: &str, field: &str| truth["steps"][name][field].as_u64().unwrap();
    let mut best = order[0];
    for &name in order {
        if planted(name, "false_merges") <= tolerance
            && planted(name, "right_pairs") > planted(best, "right_pairs")
        {
            best = name;
        }
    }
    best.to_string()
}

#[test]
fn the_recommendation_is_the_planted_best_within_the_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let (file, truth) = generate(dir.path(), "cdxj", 7, 20);
    let report = report(&["--cdxj"], &file);
    let order: Vec<&str> = (report["steps"].as_array().unwrap().iter())
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let chosen = &report["recommendation"];
    assert_eq!(chosen["step"], best_planted(&truth, &order, 0));
    assert_eq!(chosen["false_merges"], 0);
    let aggressive = truth["steps"]["protocol:aggressive"]["false_merges"]
        .as_u64()
        .unwrap();
    assert!(aggressive > 0, "false merges planted");
    assert_eq!(chosen["passed_over"][0]["step"], "protocol:aggressive");
    let tolerant = report_exiting(
        &["--cdxj", "--max-false-merges", &aggressive.to_string()],
        &file,
        0,
    );
    assert_eq!(
        tolerant["recommendation"]["step"],
        best_planted(&truth, &order, aggressive)
    );
    assert_eq!(tolerant["recommendation"]["step"], "protocol:aggressive");
    // The text says it first, the page above its charts.
    let run = urinorm(&["ladder", "--cdxj", "--quiet", &file], b"");
    let said = format!("Recommended: {}, ", chosen["step"].as_str().unwrap());
    assert!(
        run.stdout.lines().nth(2).unwrap().starts_with(&said),
        "{}",
        run.stdout
    );
    let page = urinorm(&["ladder", "--cdxj", "--quiet", "--html", "-", &file], b"");
    let at = page
        .stdout
        .find("<p class=\"recommend\">Recommended: ")
        .unwrap();
    assert!(at < page.stdout.find("<svg").unwrap());
    // The page shows the false merges the text shows, no older ones.
    let in_text: Vec<&str> = (run.stdout.lines())
        .filter_map(|l| l.strip_prefix("Largest false merges at "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    let on_page: Vec<&str> = (page.stdout.lines())
        .filter_map(|l| l.strip_prefix("<h3>Largest false merges at "))
        .map(|l| l.trim_end_matches("</h3>"))
        .collect();
    assert!(!in_text.is_empty());
    assert_eq!(in_text, on_page);
    // Without an index, it says what a recommendation needs.
    let plain = urinorm(&["ladder", "--quiet"], b"http://a/\nhttp://A/\n");
    assert!(
        plain
            .stdout
            .contains("No step is recommended: that needs a crawl index"),
        "{}",
        plain.stdout
    );
}

#[test]
fn the_digest_column_can_be_any_column() {
    let dir = tempfile::tempdir().unwrap();
    let (file, truth) = generate(dir.path(), "tsv", 3, 10);
    let swapped = dir.path().join("swapped.tsv");
    let text: String = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|line| {
            let (url, digest) = line.split_once('\t').unwrap();
            format!("{digest}\tx\t{url}\n")
        })
        .collect();
    std::fs::write(&swapped, text).unwrap();
    let flags = ["--digest-field", "1", "--field", "3"];
    assert_judged_as_planted(
        &report(&flags, swapped.to_str().unwrap()),
        &truth,
        "swapped",
    );
}

#[test]
fn the_rungs_count_every_line_with_digests_as_without() {
    // A URL captured and also not (no digest), one never captured, one
    // spelt two ways: the string rung counts captures and other lines
    // apart, and must count each spelling once (the line that is no URI
    // is rejected at every rung).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("index.tsv");
    std::fs::write(
        &file,
        "http://a/x\tD1\nhttp://a/x\t\nhttp://b/y\t\nhttp://c/z\tD2\n\
         HTTP://c/z\tD2\nhttp://a/x\tD1\nhttp://b/y\t\nnot a uri\tD3\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    // A line rejected: exit code 1.
    let with = report_exiting(&["--digest-field", "2"], file, 1);
    let without = report_exiting(&["--field", "1"], file, 1);
    for step in 0..3 {
        let (a, b) = (&with["steps"][step], &without["steps"][step]);
        assert_eq!(a["name"], b["name"]);
        assert_eq!(a["distinct"], b["distinct"], "{}", a["name"]);
        assert_eq!(a["rejected"], b["rejected"], "{}", a["name"]);
    }
    assert_eq!(with["steps"][0]["distinct"], 4);
}

/// A small CDX index as a file in `dir`.
fn cdx(dir: &Path, lines: &[&str]) -> String {
    let path = dir.join("small.cdx");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn named_redirects_are_judged_as_planted_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let named = &["--name-redirects"];
    let mut joined = Vec::new();
    for (format, flag) in [("cdx", "--cdx"), ("cdxj", "--cdxj")] {
        let (file, truth) = generate_with(dir.path(), format, 17, 20, named);
        let report = report(&[flag], &file);
        assert_judged_as_planted(&report, &truth, format);
        joined.push(report["evidence"]["redirects"].as_u64().unwrap());
    }
    // Every target named is a page's URL, captured: each redirect joins.
    let (cdxj, _) = generate_with(dir.path(), "cdxj", 17, 20, named);
    let cdxj_text = std::fs::read_to_string(&cdxj).unwrap();
    let named_lines = cdxj_text
        .lines()
        .filter(|l| l.contains("\"redirect\""))
        .count();
    assert!(named_lines > 20);
    assert_eq!(joined, [named_lines as u64; 2]);
    // A WARC's Location headers are the same evidence.
    let warc = dir.path().join("crawl.warc.gz");
    std::fs::write(&warc, warc_of(&cdxj_text)).unwrap();
    let warc = warc.to_str().unwrap();
    let (by_index, by_warc) = (report(&["--cdxj"], &cdxj), report(&["--warc"], warc));
    assert_eq!(by_index["evidence"], by_warc["evidence"]);
    // rules learn counts them, and learns the same from either.
    let learned = |flag: &str, file: &str| {
        let run = urinorm(&["rules", "learn", flag, "--quiet", file], b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        (run.stdout, run.stderr)
    };
    let (rules, said) = learned("--cdxj", &cdxj);
    assert!(
        said.contains(&format!(
            "{} redirects joined to their target's content",
            joined[1]
        )),
        "{said}"
    );
    assert_eq!(learned("--warc", warc).0, rules);
}

#[test]
fn a_redirect_joins_its_target_and_the_step_that_merges_them_is_right() {
    let dir = tempfile::tempdir().unwrap();
    let file = cdx(
        dir.path(),
        &[
            "a)/book/ 1 http://a.com/book/ text/html 200 D1 - - 1 1 f",
            // Relative, resolved against the URL redirected from.
            "a)/book 1 http://a.com/book text/html 301 R1 /book/ - 1 1 f",
            // A chain: /b to /book, which redirects to /book/.
            "a)/b 1 http://a.com/b text/html 302 R2 http://a.com/book - 1 1 f",
            // A target never captured says nothing.
            "a)/gone 1 http://a.com/gone text/html 301 R3 http://b.com/ - 1 1 f",
        ],
    );
    let report = report(&["--cdx"], &file);
    let summary = &report["evidence"];
    assert_eq!(
        (
            &summary["captures"],
            &summary["redirects"],
            &summary["not_content"]
        ),
        (&1.into(), &2.into(), &1.into())
    );
    assert_eq!(
        (&summary["urls"], &summary["contents"]),
        (&3.into(), &1.into())
    );
    // The aggressive step adds the trailing slash: /book and /book/ are
    // one key, a right merge; /b stays a missed merge.
    let aggressive = &report["steps"][4]["evidence"];
    assert_eq!(
        (&aggressive["merged_pairs"], &aggressive["right_pairs"]),
        (&1.into(), &1.into())
    );
    assert_eq!(aggressive["missed"], 1);
    // An example shows a URL only redirected from by its target.
    let run = urinorm(&["ladder", "--cdx", "--quiet", &file], b"");
    assert!(
        run.stdout.contains("http://a.com/b  -> http://a.com/book"),
        "{}",
        run.stdout
    );
}

#[test]
fn only_2xx_captures_and_revisits_are_content() {
    let dir = tempfile::tempdir().unwrap();
    let file = cdx(
        dir.path(),
        &[
            " CDX N b a m s k r M S V g",
            "a)/ 1 http://a.com/ text/html 200 D1 - - 1 1 f",
            "a)/ 2 http://a.com/ warc/revisit - D1 - - 1 1 f",
            // Both are the error page: not content, so not one content.
            "a)/x 1 http://a.com/x text/html 404 ERR - - 1 1 f",
            "a)/y 1 http://a.com/y text/html 404 ERR - - 1 1 f",
            "a)/z 1 http://a.com/z text/html 301 R1 - - 1 1 f",
            "a)/w 1 http://A.com/ text/html 200 D1 - - 1 1 f",
        ],
    );
    let report = report(&["--cdx"], &file);
    let summary = &report["evidence"];
    assert_eq!(summary["captures"], 3);
    // The redirect names no target: another line.
    assert_eq!(summary["not_content"], 3);
    assert_eq!(summary["urls"], 2);
    assert_eq!(summary["contents"], 1);
    assert_eq!(report["header"], 1);
    let syntax = &report["steps"][1]["evidence"];
    assert_eq!(
        (&syntax["merged_pairs"], &syntax["precision"]),
        (&1.into(), &1.0.into())
    );
    assert_eq!(report["steps"][0]["evidence"]["missed"], 1);
}

#[test]
fn one_page_served_for_many_paths_is_flagged_as_a_likely_error_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = (1..=8)
        .map(|n| format!("a)/m{n} 1 http://a.com/missing-{n} text/html 200 ERR - - 1 1 f"))
        .collect();
    // A parameter the site ignores: one path, many keys, a real merge missed.
    lines.extend(
        (1..=8).map(|n| format!("a)/p 1 http://a.com/p?ref={n} text/html 200 PAGE - - 1 1 f")),
    );
    // Three paths first, then the parameter: the URLs an example shows are
    // on three paths, but all of the page's are on three, so not flagged.
    for path in ["q", "en/q", "Q/index.html"] {
        lines.push(format!(
            "a)/q 1 http://a.com/{path} text/html 200 Q - - 1 1 f"
        ));
    }
    lines.extend((1..=4).map(|n| format!("a)/q 1 http://a.com/q?s={n} text/html 200 Q - - 1 1 f")));
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let file = cdx(dir.path(), &lines);
    let report = report(&["--cdx"], &file);
    let missed = &report["steps"][4]["evidence"]["missed_examples"];
    let flagged: Vec<(u64, bool)> = (missed.as_array().unwrap().iter())
        .map(|m| {
            (
                m["keys"].as_u64().unwrap(),
                m["likely_error_page"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(flagged, [(8, true), (8, false), (7, false)], "{missed}");
    assert_eq!(missed[0]["captures"][0]["digest"], "ERR");
    let run = urinorm(&["ladder", "--cdx", "--quiet", &file], b"");
    assert!(
        run.stdout.contains(
            "8 keys (likely an error page served for many URLs, a soft 404: not a merge to make):"
        ),
        "{}",
        run.stdout
    );
    let page = urinorm(&["ladder", "--cdx", "--quiet", "--html", "-", &file], b"");
    assert!(page.stdout.contains("a soft 404: not a merge to make"));
}

#[test]
fn a_page_that_changed_is_one_content_through_its_own_url() {
    let dir = tempfile::tempdir().unwrap();
    let file = cdx(
        dir.path(),
        &[
            // The page changed (D1, then D2); each spelling saw one version.
            "a)/p 1 http://a.com/p text/html 200 D1 - - 1 1 f",
            "a)/p 2 http://a.com/p text/html 200 D2 - - 1 1 f",
            "a)/p 1 http://a.com/p#top text/html 200 D1 - - 1 1 f",
            "a)/p 2 http://a.com/p?utm_source=x text/html 200 D2 - - 1 1 f",
            "b)/p 1 http://b.com/p text/html 200 D3 - - 1 1 f",
            "b)/p 1 http://www.b.com/p text/html 200 D4 - - 1 1 f",
        ],
    );
    let report = report(&["--cdx"], &file);
    assert_eq!(report["evidence"]["changing"], 1);
    assert_eq!(report["evidence"]["contents"], 3);
    let safe = &report["steps"][3]["evidence"];
    assert_eq!(
        (&safe["right_pairs"], &safe["same_pairs"]),
        (&3.into(), &3.into())
    );
    assert_eq!(safe["recall"], 1.0);
    let aggressive = &report["steps"][4]["evidence"];
    assert_eq!(aggressive["false_merges"], 1);
    assert_eq!(aggressive["false_lines"], 2);
    let example = &aggressive["false_examples"][0]["captures"];
    assert_eq!(example[0]["url"], "http://b.com/p");
    assert_eq!(example[1]["digest"], "D4");
}

#[test]
fn a_cdx_header_names_the_fields() {
    let dir = tempfile::tempdir().unwrap();
    // The Internet Archive's older 15-field layout: the URL is the 4th field.
    let file = cdx(
        dir.path(),
        &[
            " CDX A b e a m s c k r V v D d g M n",
            "a.com/ 1 1.2.3.4 http://a.com/ text/html 200 x D1 - 1 1 1 1 f - 1",
            "a.com/ 1 1.2.3.4 http://a.com:80/ text/html 200 x D1 - 1 1 1 1 f - 1",
        ],
    );
    let report = report(&["--cdx"], &file);
    assert_eq!(report["evidence"]["urls"], 2);
    assert_eq!(report["steps"][2]["evidence"]["right_pairs"], 1);
    let no_url = cdx(dir.path(), &[" CDX N b m s k", "a 1 text/html 200 D1"]);
    let run = urinorm(&["ladder", "--cdx", "--quiet", &no_url], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no original URL field ('a')"),
        "{}",
        run.stderr
    );
}

#[test]
fn hostile_fields_are_escaped_and_bad_records_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.cdxj");
    std::fs::write(
        &path,
        "!meta 0 {}\n\
         a 1 {\"url\": \"http://a.com/\", \"status\": \"200\", \"digest\": \"D\\u001b[31m\"}\n\
         a 1 {\"url\": \"http://a.com/?utm_source=\\u001b]0;x\", \"status\": \"200\", \"digest\": \"D\\u001b[31m\"}\n\
         a 1 {\"url\": \"http://b.com/\", \"status\": \"200\", \"digest\": \"E\"}\n\
         a 1 {\"url\": \"http://www.b.com/\", \"status\": \"200\", \"digest\": \"F\\u001b[2J\"}\n\
         a 1 not json\n",
    )
    .unwrap();
    let run = urinorm(
        &["ladder", "--cdxj", "--quiet", path.to_str().unwrap()],
        b"",
    );
    assert_eq!(run.code, 1, "two lines are rejected: {}", run.stderr);
    assert!(!run.stdout.contains('\x1b'), "{}", run.stdout);
    assert!(run.stdout.contains("F\\x1b[2J"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("Largest false merges at protocol:aggressive"),
        "{}",
        run.stdout
    );
    let report = report_with_code(&path, 1);
    assert_eq!(report["header"], 1);
    let reasons: Vec<&str> = report["rejected_by_reason"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons.contains(
            &"not a CDXJ record (a SURT key, a timestamp, then a JSON object with a url)"
        )
    );
    assert!(reasons.contains(&"control character is not allowed in a URI"));
    // The rejected capture is counted, not judged.
    assert_eq!(report["evidence"]["captures"], 3);
}

/// `bytes` gzipped, one member (a `.warc.gz` is a member a record).
fn gzipped(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// A WARC file's first record, as wget writes it.
const WARCINFO: &[u8] = b"WARC/1.1\r\nWARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:1>\r\n\
    Content-Type: application/warc-fields\r\nContent-Length: 14\r\n\r\nsoftware: wget\r\n\r\n";

#[test]
fn an_input_that_is_not_the_index_its_flag_says_is_refused_by_both_commands() {
    let dir = tempfile::tempdir().unwrap();
    let (cdxj, _) = generate(dir.path(), "cdxj", 3, 4);
    let (cdx, _) = generate(dir.path(), "cdx", 3, 4);
    let (bare, _) = generate(dir.path(), "cdx-bare", 3, 4);
    let warc = dir.path().join("crawl.warc");
    std::fs::write(&warc, WARCINFO).unwrap();
    let warc_gz = dir.path().join("crawl.warc.gz");
    std::fs::write(&warc_gz, gzipped(WARCINFO)).unwrap();
    let (warc, warc_gz) = (warc.to_str().unwrap(), warc_gz.to_str().unwrap());
    for (flag, file, says) in [
        (
            "--cdx",
            &cdxj[..],
            "it looks like a CDXJ index (a SURT key, a timestamp and a JSON object): give it with --cdxj",
        ),
        (
            "--cdxj",
            &cdx,
            "it looks like a CDX index (space-separated fields): give it with --cdx",
        ),
        ("--cdxj", &bare, "give it with --cdx"),
        (
            "--cdx",
            warc,
            "it looks like a WARC file, not a crawl index: give it with --warc",
        ),
        ("--cdxj", warc_gz, "a WARC file"),
        ("--digest-field", warc, "a WARC file"),
    ] {
        for command in [&["ladder"][..], &["rules", "learn"]] {
            let mut args = command.to_vec();
            args.push(flag);
            if flag == "--digest-field" {
                args.push("2");
            }
            args.extend(["--quiet", file]);
            let run = urinorm(&args, b"");
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains(file), "{args:?}: {}", run.stderr);
            assert_eq!(
                run.stderr.lines().count(),
                1,
                "one sentence: {}",
                run.stderr
            );
            assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        }
    }
    // Each given as what it is: read.
    report(&["--cdxj"], &cdxj);
    report(&["--cdx"], &bare);
}

/// The WARC records of the captures a CDXJ index lists (a response with
/// its HTTP status line, or a revisit), each gzipped as a member of its
/// own as a `.warc.gz` holds them, after wget's `warcinfo` and a request.
fn warc_of(cdxj: &str) -> Vec<u8> {
    let record = |kind: &str, url: &str, digest: &str, block: &str| {
        let text = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\n\
             WARC-Payload-Digest: {digest}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        );
        gzipped(text.as_bytes())
    };
    let mut warc = gzipped(WARCINFO);
    warc.extend(record(
        "request",
        "http://x.example/",
        "sha1:R",
        "GET / HTTP/1.1\r\n\r\n",
    ));
    for line in cdxj.lines() {
        let fields: Value = serde_json::from_str(&line[line.find('{').unwrap()..]).unwrap();
        let (url, digest) = (
            fields["url"].as_str().unwrap(),
            fields["digest"].as_str().unwrap(),
        );
        let (mime, status) = (
            fields["mime"].as_str().unwrap(),
            fields["status"].as_str().unwrap(),
        );
        let location = fields["redirect"]
            .as_str()
            .map_or(String::new(), |to| format!("Location: {to}\r\n"));
        let http = match status {
            "-" => String::new(),
            code => format!("HTTP/1.1 {code} X\r\nContent-Type: {mime}\r\n{location}\r\n"),
        };
        let kind = if mime == "warc/revisit" {
            "revisit"
        } else {
            "response"
        };
        warc.extend(record(kind, url, digest, &http));
    }
    warc
}

#[test]
fn a_warc_is_judged_as_its_cdxj_index_is() {
    let dir = tempfile::tempdir().unwrap();
    let (cdxj, _) = generate(dir.path(), "cdxj", 13, 12);
    let warc = dir.path().join("crawl.warc.gz");
    std::fs::write(&warc, warc_of(&std::fs::read_to_string(&cdxj).unwrap())).unwrap();
    let warc = warc.to_str().unwrap();
    let (by_index, by_warc) = (report(&["--cdxj"], &cdxj), report(&["--warc"], warc));
    for field in [
        "steps",
        "evidence",
        "recommendation",
        "attribution",
        "top_hosts",
    ] {
        let masked = |r: &Value| {
            let mut v = r[field].clone();
            for step in v.as_array_mut().into_iter().flatten() {
                step["seconds"] = 0.into();
            }
            v
        };
        assert_eq!(masked(&by_index), masked(&by_warc), "{field}");
    }
    assert!(by_warc["evidence"]["captures"].as_u64().unwrap() > 500);
    // The same rules are learned from either.
    let learned = |flag: &str, file: &str| {
        let run = urinorm(&["rules", "learn", flag, "--quiet", file], b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        run.stdout
    };
    assert_eq!(learned("--cdxj", &cdxj), learned("--warc", warc));
    // A CDXJ index given as a WARC is refused, naming the flag to use.
    let run = urinorm(&["ladder", "--warc", "--quiet", &cdxj], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("it is not a WARC file"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--cdxj"), "{}", run.stderr);
}

#[test]
fn an_index_without_a_capture_of_content_is_not_a_success() {
    let dir = tempfile::tempdir().unwrap();
    let file = cdx(
        dir.path(),
        &[
            "a)/x 1 http://a.com/x text/html 404 ERR - - 1 1 f",
            "a)/z 1 http://a.com/z text/html 301 R1 - - 1 1 f",
        ],
    );
    for command in [&["ladder"][..], &["rules", "learn"]] {
        let mut args = command.to_vec();
        args.extend(["--cdx", "--quiet", &file]);
        let run = urinorm(&args, b"");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("the crawl index (--cdx) held 2 lines and no capture of content"),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[test]
fn records_without_a_status_are_not_content_in_either_format() {
    let dir = tempfile::tempdir().unwrap();
    // wget's own records (its manifest, its log): no server sent them.
    let file = cdx(
        dir.path(),
        &[
            "a)/ 1 http://a.com/ text/html 200 D1 - - 1 1 f",
            "a)/ 2 http://a.com:80/ text/html 200 D1 - - 1 1 f",
            "gnu,org)/m 1 metadata://gnu.org/m text/plain - M1 - - 1 1 f",
            "gnu,org)/l 1 metadata://gnu.org/l text/plain - M1 - - 1 1 f",
        ],
    );
    let cdxj = dir.path().join("small.cdxj");
    std::fs::write(
        &cdxj,
        "a)/ 1 {\"url\": \"http://a.com/\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:D1\"}\n\
         a)/ 2 {\"url\": \"http://a.com:80/\", \"mime\": \"text/html\", \"status\": 200, \"digest\": \"D1\"}\n\
         gnu,org)/m 1 {\"url\": \"metadata://gnu.org/m\", \"mime\": \"text/plain\", \"digest\": \"M1\"}\n\
         gnu,org)/l 1 {\"url\": \"metadata://gnu.org/l\", \"mime\": \"text/plain\", \"digest\": \"M1\"}\n",
    )
    .unwrap();
    let by_cdx = report(&["--cdx"], &file);
    let by_cdxj = report(&["--cdxj"], cdxj.to_str().unwrap());
    assert_eq!(by_cdx["evidence"]["captures"], 2);
    assert_eq!(by_cdx["evidence"]["not_content"], 2);
    assert_eq!(by_cdx["evidence"], by_cdxj["evidence"]);
    assert_eq!(by_cdx["top_hosts"], by_cdxj["top_hosts"]);
}

/// `ladder --json --cdxj` on `path`, which exits with `code`.
fn report_with_code(path: &Path, code: i32) -> Value {
    let run = urinorm(
        &[
            "ladder",
            "--json",
            "--cdxj",
            "--quiet",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, code, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

#[test]
fn mistakes_are_usage_errors() {
    for (args, says) in [
        (
            &["--digest-field", "1"][..],
            "--digest-field 1 is the column of a URI (--field 1)",
        ),
        (
            &["--digest-field", "2", "--field", "2"],
            "--digest-field 2 is the column of a URI",
        ),
        (
            &["--digest-field", "0"],
            "--digest-field counts columns from 1",
        ),
        (&["--cdx", "--field", "3"], "cannot be used with"),
        (&["--cdx", "--cdxj"], "cannot be used with"),
        (&["--cdxj", "--digest-field", "2"], "cannot be used with"),
    ] {
        let mut all = vec!["ladder"];
        all.extend_from_slice(args);
        let run = urinorm(&all, b"http://a/\tD\n");
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}

/// The host a rules file names for an origin: its host after `strip-www`.
fn learned_host(origin: &str) -> String {
    let host = origin.split("://").nth(1).unwrap();
    host.strip_prefix("www.").unwrap_or(host).to_string()
}

#[test]
fn rules_learn_finds_what_was_planted_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (file, truth) = generate(dir.path(), "cdx", 21, 30);
    let rules = dir.path().join("learned.rules");
    let run = urinorm(
        &[
            "rules",
            "learn",
            "--cdx",
            "--quiet",
            "--holdout",
            "0.2",
            "-o",
            rules.to_str().unwrap(),
            &file,
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(&rules).unwrap();
    let learned: Vec<(String, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (host, rule) = l.split_once(' ').unwrap();
            (host.trim_start_matches('=').to_string(), rule.to_string())
        })
        .collect();
    // Learned over aggressive's forms (`www.` stripped), each rule is
    // written for the host with `www.` too.
    let (twins, learned): (Vec<_>, Vec<_>) = learned.iter().cloned().partition(|(host, rule)| {
        host.strip_prefix("www.")
            .is_some_and(|bare| learned.contains(&(bare.to_string(), rule.clone())))
    });
    assert_eq!(twins.len(), learned.len(), "{text}");
    // Every ignored parameter planted (each has 8 values and dozens of URLs).
    let mut planted = 0;
    for (origin, names) in truth["ignored"].as_object().unwrap() {
        for name in names.as_array().unwrap() {
            let rule = format!("drop-params {}", name.as_str().unwrap());
            assert!(
                learned.contains(&(learned_host(origin), rule.clone())),
                "{origin} {rule}: {text}"
            );
            planted += 1;
        }
    }
    assert!(planted > 5);
    // Nothing else: every rule is a planted parameter or a planted alias.
    let aliased: Vec<String> = truth["aliased"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| learned_host(o.as_str().unwrap()))
        .collect();
    for (host, rule) in &learned {
        let is_planted = match rule.strip_prefix("drop-params ") {
            Some(name) => truth["ignored"]
                .as_object()
                .unwrap()
                .iter()
                .any(|(o, names)| {
                    learned_host(o) == *host && names.as_array().unwrap().iter().any(|n| n == name)
                }),
            None => rule == "rewrite-path ^/en/(.*)$ /$1" && aliased.contains(host),
        };
        assert!(is_planted, "{host} {rule}");
    }
    // On the held-out contents: merges, and none wrong.
    assert!(
        run.stdout.contains("and 0 not (precision 1.0000)"),
        "{}",
        run.stdout
    );
    // Applied by the ladder: recall up, precision not down.
    let over_last = report(&["--cdx", "--rules", rules.to_str().unwrap()], &file);
    let steps = over_last["steps"].as_array().unwrap();
    let (aggressive, with_rules) = (&steps[4]["evidence"], &steps[5]["evidence"]);
    assert_eq!(steps[5]["name"], "+rules");
    assert!(with_rules["recall"].as_f64() > aggressive["recall"].as_f64());
    assert!(with_rules["precision"].as_f64() >= aggressive["precision"].as_f64());
    assert_eq!(with_rules["false_merges"], aggressive["false_merges"]);
    // Its false merges are aggressive's: shown there, not again at +rules.
    let page = urinorm(
        &[
            "ladder",
            "--cdx",
            "--quiet",
            "--rules",
            rules.to_str().unwrap(),
            "--html",
            "-",
            &file,
        ],
        b"",
    );
    assert!(
        page.stdout
            .contains("<h3>Largest false merges at protocol:aggressive</h3>")
    );
    assert!(
        !page
            .stdout
            .contains("<h3>Largest false merges at +rules</h3>")
    );
    // Over the safe preset (which keeps `www.`), named with them: a step of
    // its own, whose false merges are safe's (none) and the rules' (none).
    let over_safe = report(
        &[
            "--cdx",
            "--preset",
            "safe",
            "--rules",
            rules.to_str().unwrap(),
        ],
        &file,
    );
    let steps = over_safe["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 6);
    assert_eq!(
        (&steps[5]["name"], &steps[5]["over"]),
        (&"protocol:safe+rules".into(), &"protocol:safe".into())
    );
    let (safe, with_rules) = (&steps[3]["evidence"], &steps[5]["evidence"]);
    assert!(with_rules["recall"].as_f64() > safe["recall"].as_f64());
    assert_eq!(with_rules["false_merges"], 0);
    assert_eq!(with_rules["precision"], 1.0);
    // The rules' own merges: each www. host's too.
    let www_rules = twins.len() as u64;
    assert!(www_rules > 0);
    assert_eq!(over_safe["recommendation"]["step"], "protocol:safe+rules");
}

#[test]
fn case_and_prefix_aliases_are_learned_at_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    // A case-insensitive site: three pages, each spelt eight ways (three
    // distinct paths, 84 pairs merged).
    for (page, digest) in [("about", "A1"), ("team", "A2"), ("jobs", "A3")] {
        for n in 0..8u32 {
            // The first three letters upper-cased as the bits of `n` say.
            let spelt: String = (page.chars().enumerate())
                .map(|(i, c)| match i < 3 && n >> i & 1 == 1 {
                    true => c.to_ascii_uppercase(),
                    false => c,
                })
                .collect();
            lines.push(format!(
                "c)/ 1 http://case.example/{spelt} text/html 200 {digest} - - 1 1 f"
            ));
        }
    }
    // `/en/X` is `/X`, on twelve pages.
    for n in 0..12 {
        for path in [format!("/p{n}/x"), format!("/en/p{n}/x")] {
            lines.push(format!(
                "p)/ 1 http://prefix.example{path} text/html 200 P{n} - - 1 1 f"
            ));
        }
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let file = cdx(dir.path(), &lines);
    let run = urinorm(&["rules", "learn", "--cdx", "--quiet", &file], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("=case.example lowercase-path"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("=prefix.example rewrite-path ^/en/(.*)$ /$1"),
        "{}",
        run.stdout
    );
}

#[test]
fn rules_learn_within_a_small_memory_limit_learns_the_same_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = generate(dir.path(), "cdxj", 5, 40);
    let learn = |extra: &[&str]| {
        let mut args = vec!["rules", "learn", "--cdxj", "--quiet", "--holdout", "0.3"];
        args.extend_from_slice(extra);
        args.push(&file);
        let run = urinorm(&args, b"");
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("drop-params"), "{}", run.stdout);
        (run.stdout, run.stderr)
    };
    let spill_dir = dir.path().join("spill");
    std::fs::create_dir(&spill_dir).unwrap();
    let whole = learn(&[]);
    // 64 KiB: every host's part spilled and split small, one host at most
    // in memory at a time; the same rules, the same held-out figures.
    let bounded = learn(&[
        "--memory-limit",
        "64K",
        "--temp-dir",
        spill_dir.to_str().unwrap(),
    ]);
    assert_eq!(whole, bounded);
    assert_eq!(
        std::fs::read_dir(&spill_dir).unwrap().count(),
        0,
        "spill files left"
    );
    // A directory that cannot be written is said, with its name.
    let run = urinorm(
        &[
            "rules",
            "learn",
            "--cdxj",
            "--quiet",
            "--temp-dir",
            "/nonexistent/spill",
            &file,
        ],
        b"",
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("cannot write '/nonexistent/spill': no such directory"),
        "{}",
        run.stderr
    );
}

#[test]
fn rules_learn_needs_an_index_and_a_fraction() {
    let run = urinorm(&["rules", "learn", "--quiet"], b"http://a/\n");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("give --cdx, --cdxj or --digest-field N"),
        "{}",
        run.stderr
    );
    let run = urinorm(&["rules", "learn", "--cdx", "--holdout", "1"], b"");
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--holdout takes a fraction"),
        "{}",
        run.stderr
    );
    // Rules to standard output, the summary to standard error.
    let run = urinorm(
        &["rules", "learn", "--digest-field", "2", "--quiet"],
        b"http://a.com/p\tD1\nhttp://a.com/p?s=1\tD1\n",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("# Learned by `urinorm rules learn`"));
    assert!(run.stderr.contains("0 rules"), "{}", run.stderr);
}

#[test]
fn the_page_charts_false_and_missed_merges_as_the_json_reports() {
    use scraper::{Html, Selector};
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = generate(dir.path(), "cdxj", 2, 12);
    let json = report(&["--cdxj"], &file);
    let run = urinorm(&["ladder", "--cdxj", "--quiet", "--html", "-", &file], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let page = Html::parse_document(&run.stdout);
    for (chart, field) in [
        ("false-merges", "false_merges"),
        ("missed-merges", "missed"),
    ] {
        let bars = Selector::parse(&format!("svg[data-chart={chart}] rect")).unwrap();
        let values: Vec<(String, u64)> = page
            .select(&bars)
            .map(|bar| {
                let label = bar.value().attr("data-label").unwrap().to_string();
                (
                    label,
                    bar.value().attr("data-value").unwrap().parse().unwrap(),
                )
            })
            .collect();
        let expected: Vec<(String, u64)> = json["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let name = s["name"].as_str().unwrap().to_string();
                (name, s["evidence"][field].as_u64().unwrap())
            })
            .collect();
        assert_eq!(values, expected, "{chart}");
    }
    let table = Selector::parse("table.evidence tr").unwrap();
    assert_eq!(
        page.select(&table).count(),
        1 + json["steps"].as_array().unwrap().len()
    );
    assert!(
        run.stdout
            .contains("Largest false merges at protocol:aggressive")
    );
}

#[test]
fn the_judgement_is_the_same_from_standard_input_and_on_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = generate(dir.path(), "cdx", 8, 10);
    let judged = |args: &[&str], stdin: &[u8]| -> Value {
        let mut all = vec!["ladder", "--json", "--quiet", "--cdx"];
        all.extend_from_slice(args);
        let run = urinorm(&all, stdin);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).unwrap();
        report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["evidence"].clone())
            .chain(
                report["attribution"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a["evidence"].clone()),
            )
            .collect()
    };
    let from_file = judged(&[&file], b"");
    assert_eq!(judged(&[], &std::fs::read(&file).unwrap()), from_file);
    assert_eq!(judged(&["-j", "1", &file], b""), from_file);
}
