//! Link datasets: columns, base resolution, and the lenient repairs of
//! RFC 3986 Appendix C, run through the built binary.

use crate::common::cli::{urinorm, with_stats};
use crate::common::grammar::reference;
use proptest::prelude::*;

/// A key written into another column keeps the URI as it was: a CDX
/// index's SURT keys rewritten from its URLs, or a key appended.
#[test]
fn a_key_goes_into_the_column_named_and_the_uri_is_kept() {
    let cdx = b"old-key 20240101000000 http://WWW.Example.com:80/a?b=1#f text/html 200 D\n\
old-key 20240101000001 https://example.org/ text/html 200 E\n";
    let surt = ["normalize", "--quiet", "--field", "3", "--delimiter", " "];
    let keys = ["--key", "surt", "--preset", "ia", "--key-into", "1"];
    let run = urinorm(&[&surt[..], &keys].concat(), cdx);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "com,example)/a?b=1 20240101000000 http://WWW.Example.com:80/a?b=1#f text/html 200 D\n\
         org,example)/ 20240101000001 https://example.org/ text/html 200 E\n"
    );
    // One past the last column: appended; dedup keys on it as on any key.
    let tsv = b"x\thttp://A.example/p\ny\thttp://a.example:80/p\n";
    let host = [
        "dedup",
        "--quiet",
        "--field",
        "2",
        "--key",
        "host",
        "--key-into",
        "3",
    ];
    let run = urinorm(&host, tsv);
    assert_eq!(run.stdout, "x\thttp://A.example/p\ta.example\n");
    // Further than that is a line without the column; without --field, a
    // usage error.
    let run = urinorm(&["dedup", "--field", "2", "--key-into", "5"], tsv);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(run.stderr.contains("fewer fields"), "{}", run.stderr);
    let run = urinorm(&["normalize", "--key-into", "2"], tsv);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--key-into needs --field"),
        "{}",
        run.stderr
    );
}

/// (page, relative href) pairs: resolved against their page, deduplicated
/// by edge, the other columns kept byte for byte.
#[test]
fn page_href_pairs_resolved_and_deduplicated_by_edge() {
    let tsv = b"http://a.example/dir/page.html\t../img/x.png\tfirst  seen\r\n\
HTTP://A.example/dir/page.html\t/img/x.png\tsame edge, other spelling\n\
http://a.example/other/\t../img/x.png\tsame link, other page\n\
http://a.example/dir/page.html\t%zz\tbad href\n\
not a base\tx\tbad page\n";
    let run = urinorm(
        &[
            "dedup",
            "--quiet",
            "--field",
            "2",
            "--base-field",
            "1",
            "--key-fields",
            "1,2",
        ],
        tsv,
    );
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "http://a.example/dir/page.html\thttp://a.example/img/x.png\tfirst  seen\n\
         http://a.example/other/\thttp://a.example/img/x.png\tsame link, other page\n"
    );
    // Keyed on the link alone, the second page's link is a duplicate.
    let run = urinorm(
        &["dedup", "--quiet", "--field", "2", "--base-field", "1"],
        tsv,
    );
    assert_eq!(run.stdout.lines().count(), 1);
    // --emit first keeps the original line, every byte of it but its CRLF ending.
    let run = urinorm(
        &[
            "dedup",
            "--quiet",
            "--emit",
            "first",
            "--field",
            "2",
            "--base-field",
            "1",
        ],
        tsv,
    );
    assert_eq!(
        run.stdout,
        "http://a.example/dir/page.html\t../img/x.png\tfirst  seen\n"
    );
}

#[test]
fn field_with_another_delimiter_and_a_fixed_base() {
    let run = urinorm(
        &[
            "normalize",
            "--quiet",
            "--field",
            "1",
            "--delimiter",
            ",",
            "--base",
            "http://b.example/a/",
        ],
        b"./x,kept as is\n",
    );
    assert_eq!(run.stdout, "http://b.example/a/x,kept as is\n");
    let missing = urinorm(&["normalize", "--quiet", "--field", "3"], b"only\tone\n");
    assert_eq!(missing.code, 1);
    let usage = urinorm(&["normalize", "--field", "0"], b"");
    assert_eq!(usage.code, 2);
}

/// A base is repaired as the reference is (`[` outside an IP literal, as
/// a link dataset's pages have them), with --base and --base-field alike;
/// without --lenient it is refused.
#[test]
fn a_lenient_run_repairs_the_base_too() {
    let base = "http://t.example/a?title=[x]y";
    let fixed = urinorm(&["normalize", "-q", "--lenient", "--base", base], b"z\n");
    assert_eq!(
        (fixed.code, fixed.stdout.as_str()),
        (0, "http://t.example/z\n")
    );
    let strict = urinorm(&["normalize", "-q", "--base", base], b"z\n");
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    let line = format!("{base}\t?q=1\n");
    let columns = ["normalize", "-q", "--field", "2", "--base-field", "1"];
    let fixed = urinorm(&[&columns[..], &["--lenient"]].concat(), line.as_bytes());
    assert_eq!(fixed.stdout, format!("{base}\thttp://t.example/a?q=1\n"));
    let strict = urinorm(&columns, line.as_bytes());
    assert_eq!(strict.code, 1, "the line is rejected: {}", strict.stderr);
}

/// Each repair: fixed and counted with --lenient, named without it.
#[test]
fn every_lenient_repair_is_counted_and_named_when_strict() {
    let cases: [(&[u8], &str, &str, &str); 6] = [
        (
            b"  http://a.example/  ",
            "http://a.example/",
            "trim-whitespace",
            "trim the surrounding whitespace",
        ),
        (
            b"<http://a.example/>",
            "http://a.example/",
            "unwrap",
            "unwrap it",
        ),
        (
            b"'http://a.example/'",
            "http://a.example/",
            "unwrap",
            "unwrap it",
        ),
        (
            b"<http://a.example/lo ng>",
            "http://a.example/long",
            "embedded-whitespace",
            "unwrap it",
        ),
        (
            b"http://a.example/a b/\xc3\xa9",
            "http://a.example/a%20b/%C3%A9",
            "percent-encode",
            "percent-encode it",
        ),
        (
            b"http://a.example/100%",
            "http://a.example/100%25",
            "lone-percent",
            "write the '%' as %25",
        ),
    ];
    for (line, fixed, repair, hint) in cases {
        let mut input = line.to_vec();
        input.push(b'\n');
        let (run, stats) = with_stats(&["normalize", "--lenient"], &input);
        assert_eq!(
            run.stdout,
            format!("{fixed}\n"),
            "{}",
            String::from_utf8_lossy(line)
        );
        assert_eq!(
            stats["repaired"][repair].as_u64(),
            Some(1),
            "{repair}: {stats:#}"
        );
        let strict = urinorm(&["normalize"], &input);
        assert_eq!(strict.code, 1);
        assert!(
            strict.stderr.contains(&format!("--lenient would {hint}")),
            "{}",
            strict.stderr
        );
    }
}

/// IRIs become URIs: the path percent-encoded as UTF-8, the host through IDNA.
#[test]
fn iris_become_uris() {
    let run = urinorm(
        &["normalize", "--quiet", "--lenient"],
        "http://Bücher.example/straße?q=ü\n".as_bytes(),
    );
    assert_eq!(
        run.stdout,
        "http://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC\n"
    );
}

/// RFC 3986 Appendix C: the example text, and each wrapping form.
#[test]
fn appendix_c_example_text() {
    let text = b"Yes, Jim, I found it under \"http://www.w3.org/Addressing/\",\n\
but you can probably pick it up from <ftp://foo.example.\n\
com/rfc/>.  Note the warning in <http://www.ics.uci.edu/pub/\n\
ietf/uri/historical.html#WARNING>.";
    let found: Vec<String> = urinorm::lenient::extract_delimited(text)
        .into_iter()
        .map(|u| String::from_utf8(u).unwrap())
        .collect();
    assert_eq!(
        found,
        [
            "http://www.w3.org/Addressing/",
            "ftp://foo.example.com/rfc/",
            "http://www.ics.uci.edu/pub/ietf/uri/historical.html#WARNING"
        ]
    );
    let lines = b"\"http://www.w3.org/Addressing/\"\n<URL:http://example.com/>\n<URL: http://example.com/>\n<ftp://foo.example. com/rfc/>\n";
    let run = urinorm(&["normalize", "--quiet", "--lenient"], lines);
    assert_eq!(
        run.stdout,
        "http://www.w3.org/Addressing/\nhttp://example.com/\nhttp://example.com/\nftp://foo.example.com/rfc/\n"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// A line that is already a URI reference is never changed by a repair.
    #[test]
    fn repairs_never_change_a_valid_reference(parts in reference()) {
        let text = parts.compose();
        let mut out = Vec::new();
        prop_assert_eq!(urinorm::lenient::repair(text.as_bytes(), &mut out), 0);
        prop_assert!(out.is_empty());
    }
}
