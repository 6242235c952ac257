//! The ladder (§6.2.1–§6.2.3) against the RFC's examples and vectors written
//! by others. Every place urinorm deliberately differs from a suite is named
//! here with its reason.

use crate::common::{json, tsv_rows};
use urinorm::normalize::{Normalizer, Rung};

fn at(rung: Rung, input: &str) -> Result<String, urinorm::InvalidUri> {
    // Without site rules, every refusal is the text's own.
    Normalizer::new(rung)
        .normalize(input)
        .map_err(|e| e.invalid().expect("no site rules"))
}

/// §6.2.2: the example of the section.
#[test]
fn rfc3986_section_6_2_2_example() {
    let canonical = "example://a/b/c/%7Bfoo%7D";
    assert_eq!(
        at(Rung::Syntax, "eXAMPLE://a/./b/../b/%63/%7bfoo%7d").unwrap(),
        canonical
    );
    assert_eq!(at(Rung::Syntax, canonical).unwrap(), canonical);
    // §6.2.2.1: "%3a" and "%3A" are equivalent; upper case is the normal form.
    assert_eq!(at(Rung::Syntax, "a:%3a").unwrap(), "a:%3A");
}

/// §6.2.3: these four are equivalent for http, and the normal form is the last.
#[test]
fn rfc3986_section_6_2_3_examples() {
    for input in [
        "http://example.com",
        "http://example.com/",
        "http://example.com:/",
        "http://example.com:80/",
    ] {
        assert_eq!(
            at(Rung::Scheme, input).unwrap(),
            "http://example.com/",
            "{input}"
        );
    }
    // §6.2.3: an empty query is not the same as none.
    assert_eq!(
        at(Rung::Scheme, "http://example.com/?").unwrap(),
        "http://example.com/?"
    );
    // §6.2.3: mailto domain, and a scheme-defined case-insensitive part.
    assert_eq!(
        at(Rung::Scheme, "mailto:Joe@Example.COM").unwrap(),
        "mailto:Joe@example.com"
    );
}

/// fluent-uri's normalization suite: every `UriRef` row at the syntax rung.
/// Its `IriRef` rows decode non-ASCII percent-encodings into an IRI, which a
/// URI normalizer must not do (§2.1: only unreserved characters are decoded).
#[test]
fn fluent_uri_normalize_suite() {
    let mut checked = 0;
    for row in tsv_rows("conformance/fluent-uri/fluent_uri_normalize.tsv") {
        let (kind, input, expected) = (row[0].as_str(), &row[1], &row[2]);
        if kind == "IriRef" {
            continue;
        }
        assert_eq!(&at(Rung::Syntax, input).unwrap(), expected, "{input}");
        checked += 1;
    }
    assert_eq!(checked, 26);
}

/// urlcanon's dot-segment table. Its `nonspecial` table is RFC 3986 §5.2.4,
/// except for paths with `\`, which RFC 3986 does not allow in a path at all
/// (they are rejected). Its `special` table is WHATWG's reading for http(s),
/// which also treats `\` as `/`: without `\`, it agrees with the RFC, so each
/// path is checked once, not once per table.
///
/// Both tables repeat keys, 90 each; `Value` would keep the last of each
/// silently, so the file is read as the pairs it spells and every repeat must
/// carry the same expectation as the first.
#[test]
fn urlcanon_path_dots() {
    let file = "conformance/urlcanon/path_dots.json";
    let text =
        std::fs::read_to_string(crate::common::testdata(file)).expect("vector file in testdata/");
    let JsonPairs::Object(tables) = JsonReader::new(&text).value() else {
        panic!("{file} is an object of tables");
    };
    let mut distinct = std::collections::BTreeMap::new();
    let mut repeats = Vec::new();
    for (table, rows) in &tables {
        let JsonPairs::Object(rows) = rows else {
            panic!("{table} is an object of path -> expected path");
        };
        let mut rows_of_table = std::collections::BTreeMap::new();
        let mut repeated = 0;
        for (path, expected) in rows {
            let JsonPairs::String(expected) = expected else {
                panic!("{table} {path}: the expectation is a string");
            };
            if let Some(earlier) = rows_of_table.insert(path.as_str(), expected.as_str()) {
                assert_eq!(
                    earlier, expected,
                    "{table} {path} appears twice with different expectations"
                );
                repeated += 1;
            }
        }
        // The reader reads what serde_json reads, once repeats are folded.
        let as_value = json(file)[table.as_str()].clone();
        let folded: serde_json::Map<String, serde_json::Value> = rows_of_table
            .iter()
            .map(|(path, expected)| (path.to_string(), (*expected).into()))
            .collect();
        assert_eq!(as_value, serde_json::Value::Object(folded), "{table}");
        repeats.push((table.as_str(), repeated));
        distinct.insert(table.as_str(), rows_of_table);
    }
    assert_eq!(repeats, [("special", 90), ("nonspecial", 90)]);

    let (special, nonspecial) = (&distinct["special"], &distinct["nonspecial"]);
    assert_eq!(
        special.keys().collect::<Vec<_>>(),
        nonspecial.keys().collect::<Vec<_>>(),
        "the two tables hold the same paths"
    );
    let mut checked = 0;
    let mut rejected = 0;
    for (path, expected) in nonspecial {
        let result = at(Rung::Syntax, &format!("foo://h{path}"));
        if path.contains('\\') {
            assert!(
                result.is_err(),
                "{path} has a backslash and must be rejected"
            );
            rejected += 1;
            continue;
        }
        assert_eq!(
            special[path], *expected,
            "{path}: the tables differ on a path without a backslash; check each table on its own"
        );
        assert_eq!(result.unwrap(), format!("foo://h{expected}"), "{path}");
        checked += 1;
    }
    assert_eq!((checked, rejected), (348, 28));
}

/// The reader behind `urlcanon_path_dots` keeps what `Value` would fold:
/// a repeated key, in order, with escapes decoded.
#[test]
fn json_reader_keeps_repeated_keys() {
    let text = r#" { "t": { "/a\\b" : "x", "/\"": "y", "/a\\b": "z", "\u00e9": "" }, "e": {} } "#;
    let JsonPairs::Object(tables) = JsonReader::new(text).value() else {
        panic!("an object");
    };
    let spelled: Vec<(&str, Vec<(&str, &str)>)> = tables
        .iter()
        .map(|(table, rows)| {
            let JsonPairs::Object(rows) = rows else {
                panic!("{table} is an object")
            };
            let rows = rows
                .iter()
                .map(|(k, v)| match v {
                    JsonPairs::String(v) => (k.as_str(), v.as_str()),
                    JsonPairs::Object(_) => panic!("{k}: a string"),
                })
                .collect();
            (table.as_str(), rows)
        })
        .collect();
    assert_eq!(
        spelled,
        [
            (
                "t",
                vec![("/a\\b", "x"), ("/\"", "y"), ("/a\\b", "z"), ("é", "")]
            ),
            ("e", vec![]),
        ]
    );
}

/// A JSON value made of objects and strings, the only kinds urlcanon's tables
/// hold, with every key an object spells, in order: repeats are kept.
enum JsonPairs {
    Object(Vec<(String, JsonPairs)>),
    String(String),
}

/// Just enough of a JSON reader for [`JsonPairs`]; string literals are
/// decoded by serde_json, so escapes mean what they mean to `Value`.
struct JsonReader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> JsonReader<'a> {
    fn new(text: &'a str) -> Self {
        JsonReader { text, at: 0 }
    }

    fn peek(&mut self) -> u8 {
        while self.text.as_bytes()[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        self.text.as_bytes()[self.at]
    }

    fn expect(&mut self, byte: u8) {
        let found = self.peek();
        assert_eq!(
            found as char, byte as char,
            "JSON: expected {:?} at byte {}",
            byte as char, self.at
        );
        self.at += 1;
    }

    fn value(&mut self) -> JsonPairs {
        match self.peek() {
            b'{' => JsonPairs::Object(self.object()),
            b'"' => JsonPairs::String(self.string()),
            other => panic!(
                "JSON: only objects and strings, found {:?} at byte {}",
                other as char, self.at
            ),
        }
    }

    fn object(&mut self) -> Vec<(String, JsonPairs)> {
        self.expect(b'{');
        let mut pairs = Vec::new();
        if self.peek() == b'}' {
            self.at += 1;
            return pairs;
        }
        loop {
            let key = self.string();
            self.expect(b':');
            pairs.push((key, self.value()));
            match self.peek() {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return pairs;
                }
                other => panic!(
                    "JSON: expected ',' or '}}', found {:?} at byte {}",
                    other as char, self.at
                ),
            }
        }
    }

    fn string(&mut self) -> String {
        self.peek();
        let start = self.at;
        self.expect(b'"');
        let bytes = self.text.as_bytes();
        while bytes[self.at] != b'"' {
            // An escape is two bytes at least (`\"`, `\\`, `\u…`): skipping
            // the byte after `\` is enough to find the closing quote.
            self.at += if bytes[self.at] == b'\\' { 2 } else { 1 };
        }
        self.at += 1;
        serde_json::from_str(&self.text[start..self.at]).expect("a JSON string literal")
    }
}

/// urlcanon's fixed points: whatever each rung makes of them, a second pass
/// changes nothing. The inputs that are not URI references are listed with
/// the reason.
#[test]
fn urlcanon_idempotence() {
    use urinorm::ErrorKind::*;
    let inputs = json("conformance/urlcanon/idempotence.json");
    let mut rejected = Vec::new();
    for input in inputs.as_array().unwrap() {
        let input = input.as_str().unwrap();
        match at(Rung::String, input) {
            Err(e) => rejected.push((input, e.kind())),
            Ok(_) => {
                for rung in Rung::ALL {
                    let once = at(rung, input).unwrap();
                    assert_eq!(at(rung, &once).unwrap(), once, "{rung} {input}");
                }
            }
        }
    }
    for (input, kind) in &rejected {
        let expected = if input.bytes().any(|b| b < 0x20) {
            ControlCharacter
        } else if !input.is_ascii() {
            NonAscii // an IRI, not a URI (§2)
        } else if input.starts_with(':') {
            ColonInFirstSegment // a scheme cannot be empty (§3.1, §4.2)
        } else if input.contains(' ') {
            Space
        } else {
            BracketOutsideIpLiteral // `[` in a path (§3.3)
        };
        assert_eq!(*kind, expected, "{input}");
    }
    assert_eq!(rejected.len(), 19, "{rejected:?}");
}

/// WPT's IP-host tests where WHATWG URL and RFC 3986 agree: IP literals
/// (IPv6 text is RFC 5952 in both) and strict dotted IPv4. Deliberate
/// differences, all in reg-names: WHATWG reads `0x7f.1`, `256`, `1.2.3.4.`
/// and full-width digits as IPv4 and rejects `1.2.3.08`; RFC 3986 §3.2.2
/// makes every one of them a reg-name (first match wins), left for the
/// protocol rung's `ipv4-numeric`.
#[test]
fn wpt_ip_hosts_where_the_standards_agree() {
    let cases = json("conformance/wpt-url/wpt_urltestdata_ip_host_subset.json");
    let mut agreed = 0;
    for case in cases.as_array().unwrap().iter().filter(|c| c.is_object()) {
        let input = case["input"].as_str().unwrap();
        let ours = at(Rung::Scheme, input);
        let is_literal = input.contains('[');
        let strict_ipv4 = urinorm::UriRef::parse(input)
            .is_ok_and(|u| matches!(u.host_kind(), Some(urinorm::HostKind::Ipv4(_))));
        if !(is_literal || strict_ipv4) {
            continue;
        }
        match case["href"].as_str() {
            Some(href) => assert_eq!(ours.as_deref(), Ok(href), "{input}"),
            None => assert!(ours.is_err(), "{input} should be rejected, got {ours:?}"),
        }
        agreed += 1;
    }
    assert_eq!(agreed, 48);
}

/// Where urinorm deliberately differs from WPT's ToASCII tests, and why.
const TOASCII_DIFFERENCES: &[(&str, &str)] = &[
    (
        "<\u{338}",
        "`<` is not allowed in a reg-name (§3.2.2), so the parser rejects it before IDNA; WHATWG's NFC first makes `<` + U+0338 the `≮` it allows",
    ),
    (
        ">\u{338}",
        "`>` is not allowed in a reg-name (§3.2.2), so the parser rejects it before IDNA; WHATWG's NFC first makes `>` + U+0338 the `≯` it allows",
    ),
    (
        "<\u{ad}\u{338}",
        "`<` is not allowed in a reg-name (§3.2.2), so the parser rejects it before IDNA; WHATWG first drops the ignored U+00AD, then NFC makes `≮`",
    ),
    (
        ">\u{ad}\u{338}",
        "`>` is not allowed in a reg-name (§3.2.2), so the parser rejects it before IDNA; WHATWG first drops the ignored U+00AD, then NFC makes `≯`",
    ),
];

/// WPT's IDNA ToASCII tests, through a host of the http scheme. A non-ASCII
/// input reaches a URI percent-encoded as UTF-8 (§3.2.2). Every input either
/// agrees (the same host, or rejected by both) or is named in
/// [`TOASCII_DIFFERENCES`], so a new agreement or a new difference fails.
#[test]
fn wpt_toascii_through_the_scheme_rung() {
    use urinorm::ErrorKind::DisallowedCharacter;
    use urinorm::error::Component::Host;
    let cases = json("conformance/wpt-url/toascii.json");
    let mut agreed = 0;
    let mut differed = 0;
    for case in cases.as_array().unwrap().iter().filter(|c| c.is_object()) {
        let input = case["input"].as_str().unwrap();
        let encoded: String = input
            .bytes()
            .map(|b| {
                if b.is_ascii() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let uri = format!("http://{encoded}/");
        let ours = at(Rung::Scheme, &uri).map(|u| u[7..u.len() - 1].to_string());
        let expected = case["output"].as_str();
        if let Some((_, reason)) = TOASCII_DIFFERENCES.iter().find(|(i, _)| *i == input) {
            // Every difference is the parser's: WHATWG maps what RFC 3986
            // does not allow in a host.
            assert_eq!(
                ours.as_ref().map_err(|e| e.kind()),
                Err(DisallowedCharacter(Host)),
                "{input:?} no longer differs as TOASCII_DIFFERENCES says: {reason}"
            );
            assert!(expected.is_some(), "{input:?}: WHATWG maps it");
            differed += 1;
            continue;
        }
        match expected {
            Some(output) => assert_eq!(ours.as_deref(), Ok(output), "{input:?}"),
            None => assert!(ours.is_err(), "{input:?} should be rejected, got {ours:?}"),
        }
        agreed += 1;
    }
    assert_eq!(differed, TOASCII_DIFFERENCES.len());
    assert_eq!(agreed, 83);
}
