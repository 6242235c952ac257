//! One test per rule of the syntax and scheme rungs, with the section it comes from.

use urinorm::ErrorKind;
use urinorm::normalize::{Normalizer, Rule, Rung, Scratch};

fn check(rung: Rung, cases: &[(&str, &str)]) {
    let normalizer = Normalizer::new(rung);
    for (input, expected) in cases {
        assert_eq!(
            normalizer.normalize(input).as_deref(),
            Ok(*expected),
            "{rung}: {input}"
        );
    }
}

#[test]
fn string_rung_validates_and_changes_nothing() {
    check(Rung::String, &[("HTTP://A/%7e/./", "HTTP://A/%7e/./")]);
    assert!(
        Normalizer::new(Rung::String)
            .normalize("http://a b")
            .is_err()
    );
}

/// §6.2.2: every reserved character stays encoded, at every rung.
#[test]
fn reserved_characters_stay_encoded() {
    for rung in [Rung::Syntax, Rung::Scheme] {
        check(
            rung,
            &[
                (
                    "http://a/%2f%3f%23%26%3d%2b%3b%25",
                    "http://a/%2F%3F%23%26%3D%2B%3B%25",
                ),
                (
                    "http://a/%21%2a%27%28%29%40%3a",
                    "http://a/%21%2A%27%28%29%40%3A",
                ),
                ("http://a/?q=%2F&r=%26#%23", "http://a/?q=%2F&r=%26#%23"),
            ],
        );
    }
}

/// §6.2.3: an empty query or fragment is not an absent one.
#[test]
fn empty_query_and_fragment_are_kept() {
    check(
        Rung::Scheme,
        &[
            ("http://a/?", "http://a/?"),
            ("http://a/#", "http://a/#"),
            ("http://a?#", "http://a/?#"),
        ],
    );
}

/// §3.3: a path without an authority cannot start with `//`.
#[test]
fn dot_removal_cannot_turn_a_path_into_an_authority() {
    check(
        Rung::Syntax,
        &[
            ("scheme:/.//x", "scheme:/.//x"),
            ("s:/a/..//x", "s:/.//x"),
            ("s:/..//x/./y", "s:/.//x/y"),
        ],
    );
    let out = Normalizer::new(Rung::Syntax)
        .normalize("s:/a/..//x")
        .unwrap();
    let reparsed = urinorm::UriRef::parse(&out).unwrap();
    assert_eq!((reparsed.authority(), reparsed.path()), (None, "/.//x"));
}

#[test]
fn host_case_and_percent_encoding() {
    check(
        Rung::Syntax,
        &[
            ("http://%45xample.COM/", "http://example.com/"),
            ("http://ex%2fample/", "http://ex%2Fample/"),
            ("http://a:/", "http://a/"),
            (
                "HTTP://[2001:DB8:0:0:0:0:0:1]:80/",
                "http://[2001:db8::1]:80/",
            ),
            ("x://[V1F.AbC]/", "x://[v1f.abc]/"),
            ("x://User:PaSS@H/", "x://User:PaSS@h/"),
        ],
    );
}

#[test]
fn relative_references_keep_their_dots() {
    check(
        Rung::Scheme,
        &[
            ("../a/./b", "../a/./b"),
            ("//H/./a", "//h/./a"),
            ("?%7e", "?~"),
        ],
    );
}

/// §6.2.3 and the scheme table: default ports, leading zeros, empty path.
#[test]
fn scheme_ports_and_paths() {
    check(
        Rung::Scheme,
        &[
            ("http://a:80/", "http://a/"),
            ("https://a:443", "https://a/"),
            ("https://a:80/", "https://a:80/"),
            ("ws://a:80/x", "ws://a/x"),
            ("wss://a:443?q", "wss://a/?q"),
            ("ftp://a:21", "ftp://a/"),
            ("gopher://a:70", "gopher://a"),
            ("http://a:0080/", "http://a/"),
            ("http://a:08080/", "http://a:8080/"),
            ("http://a:0/", "http://a:0/"),
            ("foo://a:080/", "foo://a:080/"),
            ("http://a:65535/", "http://a:65535/"),
        ],
    );
    let err = Normalizer::new(Rung::Scheme)
        .normalize("http://a:65536/")
        .unwrap_err();
    let err = err.invalid().unwrap();
    assert_eq!((err.kind(), err.offset()), (ErrorKind::PortOutOfRange, 9));
    assert!(
        Normalizer::new(Rung::Syntax)
            .normalize("http://a:65536/")
            .is_ok()
    );
}

/// RFC 8089, RFC 6068, RFC 8141.
#[test]
fn file_mailto_urn() {
    check(
        Rung::Scheme,
        &[
            ("file://localhost/etc/hosts", "file:///etc/hosts"),
            ("FILE://LocalHost/x", "file:///x"),
            ("file://host/x", "file://host/x"),
            (
                "mailto:Joe@Example.COM,Ann@EXAMPLE.org?subject=Hi",
                "mailto:Joe@example.com,Ann@example.org?subject=Hi",
            ),
            ("mailto:a%40b@EX%C3%A9.com", "mailto:a%40b@ex%C3%A9.com"),
            ("URN:ISBN:0-395-36341-1", "urn:isbn:0-395-36341-1"),
            ("urn:Example:Foo/../Bar", "urn:example:Foo/../Bar"),
        ],
    );
}

/// §3.2.2: percent-encoded UTF-8 in a host of an Internet scheme is mapped
/// to ASCII by UTS #46, offline.
#[test]
fn internationalized_hosts() {
    check(
        Rung::Scheme,
        &[
            ("http://B%C3%BCcher.de/", "http://xn--bcher-kva.de/"),
            ("http://%E2%99%A5.net", "http://xn--g6h.net/"),
            ("http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"),
            ("foo://B%C3%BCcher.de/", "foo://b%C3%BCcher.de/"),
        ],
    );
    let err = Normalizer::new(Rung::Scheme)
        .normalize("http://a%C3%28b/")
        .unwrap_err();
    assert_eq!(
        err.invalid().map(|e| e.kind()),
        Some(ErrorKind::InvalidInternationalDomainName)
    );
}

#[test]
fn changes_name_the_rules_that_fired() {
    let mut out = Vec::new();
    let changes = Normalizer::new(Rung::Scheme)
        .normalize_into(b"HTTP://a:80/./%7e", &mut out, &mut Scratch::default())
        .unwrap();
    let rules: Vec<Rule> = changes.rules().collect();
    assert_eq!(
        rules,
        [
            Rule::LowercaseScheme,
            Rule::DecodeUnreserved,
            Rule::RemoveDotSegments,
            Rule::DropDefaultPort
        ]
    );
    assert!(rules.iter().all(|r| !r.description().is_empty()));
    out.clear();
    let none = Normalizer::new(Rung::Scheme)
        .normalize_into(b"http://a/", &mut out, &mut Scratch::default())
        .unwrap();
    assert!(none.is_empty());
}
