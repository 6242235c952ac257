//! The ladder (§6.2.1–§6.2.3) against the RFC's examples and vectors written
//! by others. Every place urinorm deliberately differs from a suite is named
//! here with its reason.

mod common;

use common::{json, tsv_rows};
use urinorm::normalize::{Normalizer, Rung};

fn at(rung: Rung, input: &str) -> Result<String, urinorm::InvalidUri> {
    Normalizer::new(rung).normalize(input)
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
/// which also treats `\` as `/`: without `\`, it agrees with the RFC.
#[test]
fn urlcanon_path_dots() {
    let tables = json("conformance/urlcanon/path_dots.json");
    let mut checked = 0;
    for table in ["nonspecial", "special"] {
        for (path, expected) in tables[table].as_object().unwrap() {
            let input = format!("foo://h{path}");
            let result = at(Rung::Syntax, &input);
            if path.contains('\\') {
                assert!(
                    result.is_err(),
                    "{path} has a backslash and must be rejected"
                );
                continue;
            }
            let expected = format!("foo://h{}", expected.as_str().unwrap());
            assert_eq!(result.unwrap(), expected, "{table} {path}");
            checked += 1;
        }
    }
    assert_eq!(checked, 696);
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

/// WPT's IDNA ToASCII tests, through a host of the http scheme. A non-ASCII
/// input reaches a URI percent-encoded as UTF-8 (§3.2.2). Deliberate
/// differences: inputs with characters RFC 3986 does not allow in a reg-name
/// (`%` not starting an escape, `[`, spaces, `<`…) are rejected by the parser
/// where WHATWG may map them; where WHATWG's forbidden-code-point list
/// rejects a name made of allowed characters, RFC 3986 keeps it.
#[test]
fn wpt_toascii_through_the_scheme_rung() {
    let cases = json("conformance/wpt-url/toascii.json");
    let mut agreed = 0;
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
        let Ok(uri_host) = urinorm::UriRef::parse(&uri) else {
            continue; // not a reg-name RFC 3986 accepts: a deliberate difference
        };
        if uri_host.host_kind() != Some(urinorm::HostKind::RegName) {
            continue;
        }
        match case["output"].as_str() {
            Some(output) => {
                assert_eq!(ours.as_deref(), Ok(output), "{input:?}");
                agreed += 1;
            }
            None if ours.is_err() => agreed += 1,
            None => {} // WHATWG's forbidden code points: RFC 3986 allows them
        }
    }
    assert!(agreed >= 40, "{agreed}");
}
