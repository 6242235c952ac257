//! SURT keys against urlcanon's `defaultIASurt` vectors (the Internet
//! Archive's default canonicalization and SURT form), with the protocol
//! transforms closest to IA's: aggressive, plus lowercase-path and
//! decode-safe, without drop-index-file (IA keeps index files).

mod common;

use urinorm::UriRef;
use urinorm::normalize::Normalizer;
use urinorm::normalize::protocol::{PRESETS, Protocol, Transform};
use urinorm::surt::write_surt;

fn ia_like() -> Normalizer {
    let mut protocol = Protocol::from(PRESETS[1]);
    protocol.add(Transform::LowercasePath);
    protocol.add(Transform::DecodeSafe);
    protocol.remove(Transform::DropIndexFile);
    Normalizer::with_protocol(protocol)
}

fn surt(input: &str) -> String {
    let canonical = ia_like().normalize(input).unwrap();
    let mut out = Vec::new();
    write_surt(&UriRef::parse(&canonical).unwrap(), &mut out);
    String::from_utf8(out).unwrap()
}

/// Where urinorm deliberately differs from IA, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "",
        "an empty line is blank, skipped and counted, not a URI with the key '-'",
    ),
    (
        "filedesc://foo.arc.gz",
        "every URI with a host gets a SURT; IA special-cases its own filedesc: records",
    ),
    (
        "http://archive.org/goo/?a=2&b&a=1",
        "sort-query is stable by name: repeated names keep their order, which servers read (a=2&a=1)",
    ),
    (
        "http://visit.webhosting.yahoo.com/visit.gif?&r=http%3A//web.archive.org/web/20090517140029/http%3A//anthonystewarthead.electric-chi.com/&b=Netscape%205.0%20%28Windows%3B%20en-US%29&s=1366x768&o=Win32&c=24&j=true&v=1.2",
        "the query keeps its case, and %3B stays encoded in a query (';' can separate parameters)",
    ),
];

#[test]
fn urlcanon_default_ia_surt() {
    let vectors = common::json("conformance/urlcanon/surt.json");
    let mut agreed = 0;
    for (input, expected) in vectors["defaultIASurt"].as_object().unwrap() {
        if let Some((_, reason)) = DIFFERENCES.iter().find(|(i, _)| i == input) {
            assert!(!reason.is_empty());
            continue;
        }
        assert_eq!(surt(input), expected.as_str().unwrap(), "{input}");
        agreed += 1;
    }
    assert_eq!(agreed, 12);
}

#[test]
fn surt_keeps_ip_hosts_and_ports() {
    assert_eq!(surt("http://192.0.2.1:8080/a"), "192.0.2.1:8080)/a");
    assert_eq!(surt("http://[::1]/a"), "[::1])/a");
    assert_eq!(surt("mailto:a@b.c"), "mailto:a@b.c");
}
