//! The parser and §5.2 resolution against vectors written by others.

use crate::common::tsv_rows;
use urinorm::resolve::{SchemeRule, resolve, resolve_into};
use urinorm::{HostKind, UriRef};

/// RFC 3986 §5.4.1 and §5.4.2: all 42 examples, base `http://a/b/c/d;p?q`.
#[test]
fn rfc3986_section_5_4_examples() {
    let rows = tsv_rows("conformance/rfc3986_section5.4_examples.tsv");
    assert_eq!(rows.len(), 42);
    for row in rows {
        let (base, reference, expected) = (&row[1], &row[2], &row[3]);
        assert_eq!(base, "http://a/b/c/d;p?q");
        assert_eq!(&resolve(base, reference).unwrap(), expected, "{reference}");
    }
}

/// §5.4.2: "http:g" is "http:g" for strict parsers, "http://a/b/c/g" for the
/// backward-compatible reading.
#[test]
fn rfc3986_section_5_4_2_non_strict_reading() {
    let base = UriRef::parse("http://a/b/c/d;p?q").unwrap();
    let reference = UriRef::parse("http:g").unwrap();
    let mut out = Vec::new();
    resolve_into(&base, &reference, SchemeRule::NonStrict, &mut out).unwrap();
    assert_eq!(out, b"http://a/b/c/g");
}

/// lo48576/iri-string's resolution vectors (the `expected` column; the
/// `expected_normalized` column belongs to the normalizer's tests).
#[test]
fn iri_string_resolution_vectors() {
    let rows = tsv_rows("conformance/iri-string/iri_string_resolve.tsv");
    assert_eq!(rows.len(), 89);
    for row in rows {
        let (base, reference, expected) = (&row[0], &row[1], &row[2]);
        let target = resolve(base, reference).unwrap();
        assert_eq!(&target, expected, "base {base} reference {reference}");
        // §5.3: the target is itself a valid reference with the same bytes.
        assert_eq!(UriRef::parse(&target).unwrap().as_str(), target);
    }
}

/// fluent-uri's strict IPv4/IPv6 vectors. An IPv4 text that fails the strict
/// rule is still a valid host: first match wins, so it is a reg-name (§3.2.2).
#[test]
fn fluent_uri_ip_vectors() {
    let rows = tsv_rows("conformance/fluent-uri/fluent_uri_parse_ip.tsv");
    assert_eq!(rows.len(), 51);
    for row in rows {
        let (kind, input, expected) = (row[0].as_str(), &row[1], &row[2]);
        match kind {
            "ipv4" => {
                let uri = format!("http://{input}/");
                let host_kind = UriRef::parse(&uri).map(|u| u.host_kind().unwrap());
                if expected == "INVALID" {
                    assert!(!matches!(host_kind, Ok(HostKind::Ipv4(_))), "{input}");
                } else {
                    let Ok(HostKind::Ipv4(octets)) = host_kind else {
                        panic!("{input}")
                    };
                    let dotted = octets.map(|o| o.to_string()).join(".");
                    assert_eq!(&dotted, expected);
                }
            }
            "ipv6" => {
                let uri = format!("http://[{input}]/");
                let parsed = UriRef::parse(&uri);
                if expected == "INVALID" {
                    assert!(parsed.is_err(), "{input} should be rejected");
                } else {
                    let Some(HostKind::Ipv6(pieces)) = parsed.unwrap().host_kind() else {
                        panic!("{input}")
                    };
                    let groups = pieces.map(|p| format!("{p:x}")).join(":");
                    assert_eq!(&groups, expected, "{input}");
                }
            }
            other => panic!("unknown kind {other}"),
        }
    }
}
