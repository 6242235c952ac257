//! Accept/reject cases for every rule of RFC 3986 Appendix A.

use urinorm::error::Component;
use urinorm::{ErrorKind, UriRef};

fn accepts(rule: &str, texts: &[&str]) {
    for text in texts {
        if let Err(e) = UriRef::parse(text) {
            panic!("{rule}: {text:?} should parse, got {e}");
        }
    }
}

fn rejects(rule: &str, cases: &[(&str, usize, ErrorKind)]) {
    for &(text, offset, kind) in cases {
        let err = UriRef::parse_bytes(text.as_bytes()).expect_err(text);
        assert_eq!(
            (err.offset(), err.kind()),
            (offset, kind),
            "{rule}: {text:?}"
        );
    }
}

#[test]
fn scheme() {
    accepts("scheme", &["a:", "A+b-c.d9:x", "z0:"]);
    // Not a scheme, so a relative path whose first segment has a colon.
    rejects("scheme", &[("1a:b", 2, ErrorKind::ColonInFirstSegment)]);
    rejects("scheme", &[("a_b:c", 3, ErrorKind::ColonInFirstSegment)]);
    rejects("scheme", &[(":a", 0, ErrorKind::ColonInFirstSegment)]);
}

#[test]
fn userinfo() {
    // A `@` after the authority's end belongs to the path.
    accepts(
        "userinfo",
        &["//u/@h", "//@h", "//u:p:w@h", "//%41!$&'()*+,;=-._~@h"],
    );
    rejects(
        "userinfo",
        &[
            (
                "//u@h@i",
                5,
                ErrorKind::DisallowedCharacter(Component::Host),
            ),
            ("//u%@h", 3, ErrorKind::InvalidPercentEncoding),
            (
                "//u^@h",
                3,
                ErrorKind::DisallowedCharacter(Component::Userinfo),
            ),
            ("//u[@h", 3, ErrorKind::BracketOutsideIpLiteral),
        ],
    );
}

#[test]
fn host_reg_name_and_ipv4() {
    accepts(
        "reg-name",
        &[
            "//",
            "//a.b-c_d~e",
            "//%C3%A9t%C3%A9",
            "//!$&'()*+,;=",
            "//1.2.3",
        ],
    );
    accepts(
        "IPv4address",
        &["//0.0.0.0", "//255.255.255.255", "//1.2.3.4:80"],
    );
    rejects(
        "reg-name",
        &[
            ("//a b", 3, ErrorKind::Space),
            ("//a\"b", 3, ErrorKind::DisallowedCharacter(Component::Host)),
            ("//a%zz", 3, ErrorKind::InvalidPercentEncoding),
            ("//a]", 3, ErrorKind::BracketOutsideIpLiteral),
            ("//h\u{e9}", 3, ErrorKind::NonAscii),
        ],
    );
}

#[test]
fn ip_literal() {
    accepts(
        "IPv6address",
        &[
            "//[::]",
            "//[::1]",
            "//[1:2:3:4:5:6:7:8]",
            "//[1::]",
            "//[::ffff:192.0.2.128]",
            "//[1:2:3:4:5:6:1.2.3.4]",
            "//[FEDC:BA98::3210]:8080/",
        ],
    );
    accepts("IPvFuture", &["//[v1.a]", "//[V1F.a:b!$]", "//[vAB.~]"]);
    rejects(
        "IP-literal",
        &[
            ("//[1:2:3:4:5:6:7:8:9]", 3, ErrorKind::InvalidIpv6),
            ("//[1:2:3:4:5:6:7]", 3, ErrorKind::InvalidIpv6),
            ("//[1::2::3]", 3, ErrorKind::InvalidIpv6),
            ("//[::1.2.3.256]", 3, ErrorKind::InvalidIpv6),
            ("//[fe80::1%25eth0]", 3, ErrorKind::InvalidIpv6),
            ("//[12345::]", 3, ErrorKind::InvalidIpv6),
            ("//[]", 3, ErrorKind::InvalidIpv6),
            ("//[v.a]", 3, ErrorKind::InvalidIpvFuture),
            ("//[v1.]", 3, ErrorKind::InvalidIpvFuture),
            ("//[v1a]", 3, ErrorKind::InvalidIpvFuture),
            ("//[::1", 2, ErrorKind::UnclosedIpLiteral),
            ("//[::1]a", 7, ErrorKind::JunkAfterIpLiteral),
            ("//[::1]]", 7, ErrorKind::JunkAfterIpLiteral),
            ("//a[::1]", 3, ErrorKind::BracketOutsideIpLiteral),
        ],
    );
}

#[test]
fn port() {
    accepts(
        "port",
        &[
            "//h:",
            "//h:0",
            "//h:65535",
            "//h:99999999999999999999",
            "//[::1]:",
        ],
    );
    rejects(
        "port",
        &[
            ("//h:8a", 5, ErrorKind::PortNotANumber),
            ("//h:-1", 4, ErrorKind::PortNotANumber),
            ("//h:1:2", 5, ErrorKind::PortNotANumber),
            ("//h:8 0", 5, ErrorKind::Space),
        ],
    );
}

#[test]
fn paths() {
    accepts("path-abempty", &["//h", "//h/", "//h//a//", "//h/a:b@c"]);
    accepts("path-absolute", &["/", "/a", "/a//b", "s:/a:b"]);
    accepts("path-noscheme", &["a", "a/b:c", "./a:b", "@a"]);
    accepts("path-rootless", &["s:a", "s:a:b", "s:%2F"]);
    accepts("path-empty", &["", "s:", "?q", "#f"]);
    rejects(
        "path",
        &[
            ("a:b/[", 4, ErrorKind::BracketOutsideIpLiteral),
            ("a:b/]", 4, ErrorKind::BracketOutsideIpLiteral),
            ("/a b", 2, ErrorKind::Space),
            ("/a\tb", 2, ErrorKind::ControlCharacter),
            ("/a\x7f", 2, ErrorKind::ControlCharacter),
            ("/%", 1, ErrorKind::InvalidPercentEncoding),
            ("/%a", 1, ErrorKind::InvalidPercentEncoding),
            ("/a\\b", 2, ErrorKind::DisallowedCharacter(Component::Path)),
            ("/{x}", 1, ErrorKind::DisallowedCharacter(Component::Path)),
            ("/caf\u{e9}", 4, ErrorKind::NonAscii),
        ],
    );
    rejects(
        "path-noscheme",
        &[("1:b/c", 1, ErrorKind::ColonInFirstSegment)],
    );
}

#[test]
fn query_and_fragment() {
    accepts("query", &["?", "?a=b&c=d/e?f:@", "?%20"]);
    accepts("fragment", &["#", "#a/b?c:@", "?q#f"]);
    rejects(
        "query",
        &[
            ("?a b", 2, ErrorKind::Space),
            ("?a|b", 2, ErrorKind::DisallowedCharacter(Component::Query)),
            ("?%G0", 1, ErrorKind::InvalidPercentEncoding),
            ("?[", 1, ErrorKind::BracketOutsideIpLiteral),
        ],
    );
    rejects(
        "fragment",
        &[
            ("#a#b", 2, ErrorKind::SecondHash),
            ("#%", 1, ErrorKind::InvalidPercentEncoding),
            ("#<", 1, ErrorKind::DisallowedCharacter(Component::Fragment)),
        ],
    );
}

#[test]
fn invalid_utf8_is_a_non_ascii_byte() {
    let err = UriRef::parse_bytes(b"http://a/\xff").unwrap_err();
    assert_eq!((err.offset(), err.kind()), (9, ErrorKind::NonAscii));
}
