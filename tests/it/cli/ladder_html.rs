//! `urinorm ladder --html`: a page that an HTML5 parser reads without an
//! error, whose charts, counts, risks and merges are `--json`'s, in which no byte of the
//! input becomes markup, and which matches its golden copy on the sample.

use std::collections::BTreeSet;

use crate::common::cli::urinorm;
use scraper::{Html, Selector};
use serde_json::Value;

/// The sample plus lines that each step merges and lines that are rejected.
fn input() -> Vec<u8> {
    let mut bytes = std::fs::read(crate::common::testdata("sample/urls.txt")).unwrap();
    bytes.extend_from_slice(
        b"HTTPS://WWW.SEC.GOV/edgar.shtml\nhttps://www.sec.gov:443/edgar.shtml\n\
          https://www.sec.gov/./edgar.shtml#top\nhttp://sec.gov/edgar.shtml?utm_source=x\n\
          not a uri\nhttp://a b/\nhttp://x/%zz\nhttp://[::1/\n",
    );
    bytes
}

/// The page and the JSON report of one input, from two runs.
fn page_and_json(args: &[&str], input: &[u8]) -> (Html, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let mut html_args = vec!["ladder", "--quiet", "--html", path.to_str().unwrap()];
    html_args.extend_from_slice(args);
    let mut json_args = vec!["ladder", "--quiet", "--json"];
    json_args.extend_from_slice(args);
    let run = urinorm(&json_args, input);
    let json: Value = serde_json::from_str(&run.stdout).expect("the report is JSON");
    let rejected = json["steps"][0]["rejected"].as_u64().unwrap();
    let code = i32::from(rejected > 0);
    assert_eq!(run.code, code, "{}", run.stderr);
    let run = urinorm(&html_args, input);
    assert_eq!(run.code, code, "{}", run.stderr);
    assert!(
        run.stdout.contains("distinct"),
        "the table still goes to standard output"
    );
    let page = Html::parse_document(&std::fs::read_to_string(&path).unwrap());
    (page, json)
}

fn select<'a>(page: &'a Html, selector: &str) -> Vec<scraper::ElementRef<'a>> {
    page.select(&Selector::parse(selector).unwrap()).collect()
}

/// A chart's bars, as (label, value).
fn bars(page: &Html, chart: &str) -> Vec<(String, i64)> {
    select(page, &format!("svg[data-chart={chart}] rect"))
        .iter()
        .map(|bar| {
            let attr = |name| bar.value().attr(name).unwrap().to_string();
            (attr("data-label"), attr("data-value").parse().unwrap())
        })
        .collect()
}

/// The text of each element `selector` finds.
fn texts(page: &Html, selector: &str) -> Vec<String> {
    select(page, selector)
        .iter()
        .map(|e| e.text().collect())
        .collect()
}

fn str_of(value: &Value) -> String {
    value.as_str().unwrap().to_string()
}

fn pairs(list: &Value, label: &str, value: &str) -> Vec<(String, i64)> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e[label].as_str().unwrap().to_string(),
                e[value].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_page_parses_as_html5_without_an_error() {
    let (page, _) = page_and_json(&[], &input());
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    assert_eq!(select(&page, "svg.chart").len(), 3);
    assert!(select(&page, "script, link, img, iframe, object").is_empty());
}

#[test]
fn charts_and_counts_are_the_json_reports() {
    let rules = crate::common::testdata("rules/site.rules");
    let (page, json) = page_and_json(&["--rules", rules.to_str().unwrap()], &input());
    // What each step merges, not its distinct keys, which differ by a
    // fraction of a percent: their bars would look alike.
    assert_eq!(
        bars(&page, "collapsed"),
        pairs(&json["steps"], "name", "collapsed")
    );
    assert_eq!(
        bars(&page, "attribution"),
        pairs(&json["attribution"], "transform", "merges")
    );
    assert_eq!(
        bars(&page, "rules_attribution"),
        pairs(&json["rules_attribution"], "rules", "merges")
    );
    let sites = bars(&page, "sites");
    assert_eq!(
        sites.iter().map(|s| s.1).collect::<Vec<_>>(),
        [
            json["hosts"].as_i64().unwrap(),
            json["domains"].as_i64().unwrap()
        ]
    );
    // Each step's distinct keys and what it is over, written beside its bar.
    let notes = texts(&page, "svg[data-chart=collapsed] text.value");
    let steps = json["steps"].as_array().unwrap();
    assert_eq!(notes.len(), steps.len());
    for (note, step) in notes.iter().zip(steps) {
        let distinct = step["distinct"].as_i64().unwrap();
        let distinct = distinct.to_string();
        let grouped: String = distinct
            .chars()
            .enumerate()
            .flat_map(|(i, d)| {
                let comma = i > 0 && (distinct.len() - i) % 3 == 0;
                comma.then_some(',').into_iter().chain([d])
            })
            .collect();
        assert!(note.contains(&format!("{grouped} distinct")), "{note}");
        if let Some(over) = step["over"].as_str() {
            assert!(note.ends_with(&format!("over {over}")), "{note}");
        }
    }
    // Each transform's risk, as --json names it.
    let risks: Vec<String> = texts(&page, "table.risks td:nth-child(2)");
    let json_risks: Vec<String> = json["attribution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| str_of(&row["risk"]))
        .collect();
    assert_eq!(risks, json_risks);
    // Rejected lines by reason: the JSON's, and they add up to the scheme
    // rung's rejects.
    let reasons: Vec<(String, i64)> = select(&page, "table.rejected td[data-lines]")
        .iter()
        .map(|cell| {
            let row = scraper::ElementRef::wrap(cell.parent().unwrap()).unwrap();
            let reason: String = row
                .first_child()
                .and_then(scraper::ElementRef::wrap)
                .unwrap()
                .text()
                .collect();
            (
                reason,
                cell.value().attr("data-lines").unwrap().parse().unwrap(),
            )
        })
        .collect();
    let expected = pairs(&json["rejected_by_reason"], "reason", "lines");
    assert_eq!(reasons, expected);
    for reason in [
        "space is not allowed in a URI",
        "invalid percent-encoding",
        "IP literal without its closing ']'",
    ] {
        assert!(
            expected.iter().any(|r| r.0 == reason),
            "{reason}: {expected:?}"
        );
    }
    let total: i64 = expected.iter().map(|r| r.1).sum();
    assert_eq!(total, json["steps"][2]["rejected"].as_i64().unwrap());
    // The example merges: each key and its spellings, in order, the steps'
    // then each transform's alone.
    let merges: Vec<&Value> = ["steps", "attribution"]
        .iter()
        .flat_map(|list| json[list].as_array().unwrap())
        .flat_map(|s| s["examples"].as_array().unwrap())
        .collect();
    assert!(
        json["attribution"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| !row["examples"].as_array().unwrap().is_empty()),
        "transforms' own merges are shown"
    );
    let keys = texts(&page, ".merge .key code");
    assert!(!keys.is_empty());
    assert_eq!(
        keys,
        merges.iter().map(|m| str_of(&m["key"])).collect::<Vec<_>>()
    );
    let spellings = texts(&page, ".merge li code");
    let json_spellings: Vec<String> = merges
        .iter()
        .flat_map(|m| m["spellings"].as_array().unwrap())
        .map(str_of)
        .collect();
    assert_eq!(spellings, json_spellings, "the marks add no text");
}

#[test]
fn no_byte_of_the_input_becomes_markup() {
    let hostile = "http://example.com/<script>alert(1)</script>\n\
         http://example.com/\"><img src=x onerror=alert(2)>\n\
         http://example.com/'onmouseover='alert(3)\n\
         http://example.com/a\u{1b}]0;pwned\u{7}\n\
         http://example.com/<style>body{display:none}</style>\n\
         http://example.com/&lt;b&gt;\n";
    let dir = tempfile::tempdir().unwrap();
    // A file name the user gave is shown too.
    let input = dir.path().join("<b onclick=x>\u{1b}]0;list.txt");
    // Each line twice, in spellings the syntax rung merges: examples.
    let spellings = format!("{hostile}{}", hostile.replace("example.com", "EXAMPLE.com"));
    std::fs::write(&input, spellings).unwrap();
    let path = dir.path().join("report.html");
    let run = urinorm(
        &[
            "ladder",
            "--quiet",
            "--lenient",
            "--examples",
            "10",
            "--html",
            path.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        b"",
    );
    // --lenient percent-encodes what is hostile: every line is a URI.
    assert_eq!(run.code, 0, "{}", run.stderr);
    let text = std::fs::read_to_string(&path).unwrap();
    let page = Html::parse_document(&text);
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    let elements: BTreeSet<&str> = page
        .root_element()
        .descendants()
        .filter_map(|n| n.value().as_element())
        .map(|e| e.name())
        .collect();
    let allowed: BTreeSet<&str> = [
        "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "span", "svg",
        "text", "rect", "div", "code", "ul", "li", "mark", "table", "tr", "th", "td", "br",
        "tbody",
    ]
    .into();
    assert!(
        elements.is_subset(&allowed),
        "{:?}",
        elements.difference(&allowed)
    );
    for element in page
        .root_element()
        .descendants()
        .filter_map(|n| n.value().as_element())
    {
        for (name, _) in element.attrs() {
            assert!(
                !name.starts_with("on"),
                "an attribute {name} on <{}>",
                element.name()
            );
        }
    }
    assert_eq!(select(&page, "style").len(), 1, "only the page's own style");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "control bytes escaped"
    );
    // The input is there, as text.
    let shown: String = page.root_element().text().collect();
    // `<`, `>` and control bytes reach the page only through what the user
    // names (lines are URIs: --lenient encoded them); `'` and `&` are URI
    // characters, and stay text.
    assert!(shown.contains("<b onclick=x>\\x1b]0;list.txt"), "{shown}");
    assert!(shown.contains("http://example.com/%3Cscript%3Ealert(1)%3C/script%3E"));
    assert!(shown.contains("http://example.com/'onmouseover='alert(3)"));
    assert!(shown.contains("http://example.com/&lt;b&gt;"));
}

/// The page with what changes from run to run (the time) masked.
fn masked(page: &str) -> String {
    let time = regex::Regex::new(r#"<span class="time">[0-9.]+</span>"#).unwrap();
    let version = format!(">{}<", env!("CARGO_PKG_VERSION"));
    time.replace_all(page, r#"<span class="time">TIME</span>"#)
        .replace(&version, ">VERSION<")
}

#[test]
fn the_sample_page_matches_its_golden_copy() {
    let sample = crate::common::testdata("sample/urls.txt");
    let run = urinorm(
        &[
            "ladder",
            "--quiet",
            "--html",
            "-",
            "-j",
            "1",
            sample.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, 1, "the sample has rejected lines: {}", run.stderr);
    let page = masked(&run.stdout).replace(sample.to_str().unwrap(), "testdata/sample/urls.txt");
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/ladder-sample.html");
    if std::env::var_os("URINORM_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &page).unwrap();
    }
    let expected = std::fs::read_to_string(&golden)
        .expect("tests/golden/ladder-sample.html (URINORM_BLESS=1 writes it)");
    assert!(
        page == expected,
        "the page differs from tests/golden/ladder-sample.html; if the change is meant, run with URINORM_BLESS=1 and review the diff"
    );
}
