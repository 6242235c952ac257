//! The protocol rung: each transform's changes, the sharp edges it must not
//! cut, idempotence, presets on real lines, and §7.4 numeric hosts against
//! urlcanon's vectors.

use crate::common::grammar::reference;
use proptest::prelude::*;
use urinorm::normalize::protocol::{PRESETS, Preset, Protocol, Transform};
use urinorm::normalize::{Normalizer, Rung};

/// A normalizer with exactly these transforms.
fn only(transforms: &[Transform]) -> Normalizer {
    let mut protocol = Protocol::none();
    transforms.iter().for_each(|&t| protocol.add(t));
    Normalizer::with_protocol(protocol)
}

/// Checks each `(input, expected)` and that the output is a fixed point.
fn check(transforms: &[Transform], cases: &[(&str, &str)]) {
    let n = only(transforms);
    for (input, expected) in cases {
        let once = n
            .normalize(input)
            .unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(once, *expected, "{transforms:?} on {input}");
        assert_eq!(
            n.normalize(&once).unwrap(),
            once,
            "{transforms:?} is not idempotent on {input}"
        );
    }
}

#[test]
fn drop_fragment() {
    check(
        &[Transform::DropFragment],
        &[
            ("http://a/b#c", "http://a/b"),
            ("http://a/b#", "http://a/b"),
            ("urn:a:b#c", "urn:a:b#c"),
        ],
    );
}

#[test]
fn sort_query_is_stable_and_never_reencodes() {
    check(
        &[Transform::SortQuery],
        &[
            ("http://a/?b=2&a=1", "http://a/?a=1&b=2"),
            ("http://a/?b=2&a=9&a=1", "http://a/?a=9&a=1&b=2"),
            ("http://a/?sig=%2F%2b&a=%26", "http://a/?a=%26&sig=%2F%2B"),
            ("http://a/?c&b=&a", "http://a/?a&b=&c"),
        ],
    );
}

#[test]
fn empty_query_and_params() {
    check(
        &[Transform::DropEmptyQuery],
        &[("http://a/?", "http://a/"), ("http://a/?x", "http://a/?x")],
    );
    check(
        &[Transform::DropEmptyParams],
        &[
            ("http://a/?a=&b=1&&c", "http://a/?b=1&c"),
            ("http://a/?a=1", "http://a/?a=1"),
            ("http://a/?&&a=1&", "http://a/?a=1"),
        ],
    );
    // Empty segments are not sorted to the front: aggressive drops them.
    check(
        &Preset::from_names(&["aggressive"]),
        &[
            ("http://a/?a=&b=1", "https://a/?b=1"),
            ("http://a/?&&b=1&a=2&", "https://a/?a=2&b=1"),
            ("http://a/?&&", "https://a/"),
        ],
    );
    // The safe preset keeps them: `a=` can mean something to a server.
    check(
        &Preset::from_names(&["safe"]),
        &[("http://a/?a=&&b=1", "http://a/?a=&&b=1")],
    );
}

#[test]
fn tracking_params() {
    check(
        &[Transform::DropTrackingParams, Transform::DropEmptyQuery],
        &[
            ("http://a/?utm_source=x&utm_medium=y&id=3", "http://a/?id=3"),
            ("http://a/?gclid=1&fbclid=2&msclkid=3", "http://a/"),
            ("http://a/?UTM_Source=x&q=1", "http://a/?q=1"),
            // Not tracking: names that only start like one, or values.
            (
                "http://a/?utmost=1&x=utm_source",
                "http://a/?utmost=1&x=utm_source",
            ),
        ],
    );
    let mut custom = Protocol::none();
    custom.add(Transform::DropTrackingParams);
    custom.set_tracking_list("# mine\nref\nsrc_*\n");
    let n = Normalizer::with_protocol(custom);
    assert_eq!(
        n.normalize("http://a/?ref=1&src_a=2&utm_source=3").unwrap(),
        "http://a/?utm_source=3"
    );
}

#[test]
fn session_ids_only_when_they_look_like_tokens() {
    check(
        &[Transform::DropSessionIds],
        &[
            (
                "http://a/p;jsessionid=0123456789ABCDEF0123?x=1",
                "http://a/p?x=1",
            ),
            (
                "http://a/x?PHPSESSID=0123456789abcdef0123456789&b=2",
                "http://a/x?b=2",
            ),
            (
                "http://a/x?ASPSESSIONIDQABCDE=ABCDEFGHIJKLMNOPQRSTUVWX",
                "http://a/x?",
            ),
            ("http://a/x?CFID=123456&CFTOKEN=98765432&q", "http://a/x?q"),
            (
                "http://a/(S(abcdefghijklmnopqrstuvwx))/page.aspx",
                "http://a/page.aspx",
            ),
            // Short or data-like values stay: sid=1 is a site id, not a session.
            (
                "http://a/x?sid=1&PHPSESSID=abc",
                "http://a/x?sid=1&PHPSESSID=abc",
            ),
            ("http://a/p;jsessionid=short", "http://a/p;jsessionid=short"),
            // WebLogic's server suffix, and `$` marks.
            (
                "http://a/p;jsessionid=0123456789ABCDEF0123!-12345!678/q",
                "http://a/p/q",
            ),
            (
                "http://a/x?jsessionid=0123456789ABCDEF0123$1&b=2",
                "http://a/x?b=2",
            ),
            (
                "http://a/p;jsessionid=!-12345",
                "http://a/p;jsessionid=!-12345",
            ),
            // ASP.NET cookieless compound segments.
            (
                "http://a/(X(1)S(abcdefghijklmnopqrstuvwx))/page.aspx",
                "http://a/page.aspx",
            ),
            (
                "http://a/(A(abcdefghijklmnopqrstuvwx)S(abcdefghijklmnopqrstuvwx)F(0123456789ABCDEF0123))/b/page.aspx",
                "http://a/b/page.aspx",
            ),
            (
                "http://a/shop/(abcdefghijklmnopqrstuvwx)/page.aspx",
                "http://a/shop/page.aspx",
            ),
            // Not sessions: a bare token as the last segment, short
            // compound values with no session, other parentheses.
            (
                "http://a/shop/(abcdefghijklmnopqrstuvwx)",
                "http://a/shop/(abcdefghijklmnopqrstuvwx)",
            ),
            ("http://a/(X(1))/page.aspx", "http://a/(X(1))/page.aspx"),
            // The whole path a session segment: what is left is `/`.
            ("http://a/(S(abcdefghijklmnopqrstuvwx))?q", "http://a/?q"),
            ("http://a/(film)/b", "http://a/(film)/b"),
            ("http://a/f(x)/b", "http://a/f(x)/b"),
        ],
    );
}

#[test]
fn strip_www_only_the_exact_label_and_never_down_to_a_public_suffix() {
    check(
        &[Transform::StripWww],
        &[
            ("http://www.example.com/", "http://example.com/"),
            ("http://www.com/", "http://www.com/"),
            // By the Public Suffix List, ICANN and private sections.
            ("http://www.bbc.co.uk/", "http://bbc.co.uk/"),
            ("http://www.co.uk/", "http://www.co.uk/"),
            ("http://www.foo.github.io/", "http://foo.github.io/"),
            ("http://www.github.io/", "http://www.github.io/"),
            ("http://www.www.example.com/", "http://example.com/"),
            ("http://www.www.co.uk/", "http://www.co.uk/"),
            ("http://www2.example.com/", "http://www2.example.com/"),
            ("http://www1355544.com/", "http://www1355544.com/"),
            ("http://wwwexample.com/", "http://wwwexample.com/"),
            ("ftp://www.example.com/", "ftp://www.example.com/"),
        ],
    );
}

/// A name that reads as a number keeps its `www.`: without it, browsers
/// (and `ipv4-numeric`) would take it for an address.
#[test]
fn strip_www_never_turns_a_name_into_an_address() {
    check(
        &[Transform::StripWww, Transform::Ipv4Numeric],
        &[
            ("http://www.1.2.3/", "http://www.1.2.3/"),
            ("http://www.example.0x1f/", "http://www.example.0x1f/"),
            ("http://www.1.2.3.example/", "http://1.2.3.example/"),
        ],
    );
}

#[test]
fn index_files_and_trailing_slashes() {
    check(
        &[Transform::DropIndexFile],
        &[
            ("http://a/b/index.html", "http://a/b/"),
            ("http://a/Default.ASPX?x=1", "http://a/?x=1"),
            ("http://a/index.html5", "http://a/index.html5"),
            ("http://a/myindex.html", "http://a/myindex.html"),
        ],
    );
    check(
        &[Transform::TrailingSlashRemove],
        &[
            ("http://a/b/", "http://a/b"),
            ("http://a/", "http://a/"),
            ("http://a/b/?q", "http://a/b?q"),
        ],
    );
    // Each can expose the other: both apply until neither changes anything.
    check(
        &[Transform::DropIndexFile, Transform::TrailingSlashRemove],
        &[
            ("http://a/x/index.html", "http://a/x"),
            ("http://a/index.html/", "http://a/"),
            ("http://a/index.html/index.htm/", "http://a/"),
        ],
    );
    check(
        &[Transform::TrailingSlashAdd],
        &[
            ("http://a/b", "http://a/b/"),
            ("http://a/", "http://a/"),
            ("http://a/b.html", "http://a/b.html"),
        ],
    );
    let mut both = Protocol::none();
    both.add(Transform::TrailingSlashAdd);
    both.add(Transform::TrailingSlashRemove);
    assert!(
        !both.contains(Transform::TrailingSlashAdd),
        "the two choices exclude each other"
    );
}

#[test]
fn scheme_userinfo_and_host_transforms() {
    check(
        &[Transform::HttpsUpgrade],
        &[
            ("http://a/", "https://a/"),
            ("http://a:443/", "https://a/"),
            ("http://a:8080/", "https://a:8080/"),
            ("ws://a/", "wss://a/"),
        ],
    );
    check(
        &[Transform::DropUserinfo],
        &[("http://u:p@a/", "http://a/"), ("http://@a/", "http://a/")],
    );
    check(
        &[Transform::HostTrailingDot],
        &[
            ("http://example.com./", "http://example.com/"),
            ("http://a/", "http://a/"),
            // Only the root dot: `a..` ends in an empty label and stays.
            ("http://www.google.com.../", "http://www.google.com.../"),
            ("http://.../", "http://.../"),
            ("http://./", "http://./"),
        ],
    );
    check(
        &[Transform::Ipv4Numeric],
        &[
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("http://017700000001/", "http://127.0.0.1/"),
            ("http://2130706433/", "http://127.0.0.1/"),
            ("http://1.2.3.4./", "http://1.2.3.4/"),
            ("http://256.256.256.256/", "http://256.256.256.256/"),
            ("http://1.2.3.08/", "http://1.2.3.08/"),
            ("http://example.com/", "http://example.com/"),
        ],
    );
}

#[test]
fn path_transforms() {
    check(
        &[Transform::CollapseSlashes],
        &[
            ("http://a//b///c/", "http://a/b/c/"),
            ("http://a/b", "http://a/b"),
        ],
    );
    check(
        &[Transform::DecodeSafe],
        &[
            ("http://a/%40x%3Ay%2F", "http://a/@x:y%2F"),
            (
                "http://a/?q=%26%3D%2B%3B%2F%3A",
                "http://a/?q=%26%3D%2B%3B%2F:",
            ),
            ("http://a/#%2F%25", "http://a/#/%25"),
        ],
    );
    check(
        &[Transform::LowercasePath],
        &[("http://a/Foo/%7Bx%7D?Q", "http://a/foo/%7Bx%7D?Q")],
    );
}

/// Transforms are for web schemes only; others pass through the scheme rung.
#[test]
fn other_schemes_pass_through() {
    let all = Preset::from_names(&["aggressive"]);
    check(
        &all,
        &[
            ("ftp://www.example.com/a/#x", "ftp://www.example.com/a/#x"),
            ("mailto:a@b.com?utm_source=x", "mailto:a@b.com?utm_source=x"),
        ],
    );
}

/// urlcanon's §7.4 vectors: every valid form maps to its address, every
/// invalid one stays a reg-name.
#[test]
fn urlcanon_funky_ipv4() {
    let cases = crate::common::json("conformance/urlcanon/funky_ipv4.json");
    let n = only(&[Transform::Ipv4Numeric]);
    let mut checked = 0;
    for (host, expected) in cases.as_object().unwrap() {
        let uri = format!("http://{host}/");
        let Ok(out) = n.normalize(&uri) else { continue };
        match expected.as_str() {
            Some(address) => assert_eq!(out, format!("http://{address}/"), "{host}"),
            None => assert_eq!(
                out,
                Normalizer::new(Rung::Scheme).normalize(&uri).unwrap(),
                "{host} is no address"
            ),
        }
        checked += 1;
    }
    assert_eq!(checked, 47);
}

#[test]
fn presets_on_real_lines_from_the_sample() {
    let sample = std::fs::read_to_string(crate::common::testdata("sample/urls.txt")).unwrap();
    for preset in PRESETS {
        let n = Normalizer::with_protocol(Protocol::from(*preset));
        let scheme = Normalizer::new(Rung::Scheme);
        let mut changed = 0;
        for line in sample.lines().map(|l| l.trim_start_matches('\u{feff}')) {
            let (Ok(p), Ok(s)) = (n.normalize(line), scheme.normalize(line)) else {
                continue;
            };
            assert_eq!(
                n.normalize(&p).unwrap(),
                p,
                "{} not a fixed point on {line}",
                preset.name
            );
            changed += usize::from(p != s);
        }
        assert!(changed > 0, "{} changed no sample line", preset.name);
    }
    let aggressive = Normalizer::with_protocol(Protocol::from(PRESETS[1]));
    assert_eq!(
        aggressive
            .normalize("http://www.sec.gov/edgar.shtml?utm_source=x#top")
            .unwrap(),
        "https://sec.gov/edgar.shtml"
    );
}

/// Helper: a preset's transforms by name.
trait FromNames {
    fn from_names(names: &[&str]) -> Vec<Transform>;
}

impl FromNames for Preset {
    fn from_names(names: &[&str]) -> Vec<Transform> {
        names
            .iter()
            .flat_map(|n| {
                n.parse::<Preset>()
                    .unwrap()
                    .transforms()
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Every transform on: the output is a fixed point, and the rung is
    /// monotone over the scheme rung.
    #[test]
    fn protocol_is_a_fixed_point_and_monotone(parts in reference(), preset in 0..PRESETS.len()) {
        let input = parts.compose();
        let mut protocol = Protocol::from(PRESETS[preset]);
        protocol.add(Transform::DecodeSafe);
        protocol.add(Transform::DropEmptyParams);
        protocol.add(Transform::LowercasePath);
        let n = Normalizer::with_protocol(protocol);
        if let Ok(once) = n.normalize(&input) {
            prop_assert!(urinorm::UriRef::parse(&once).is_ok(), "{} -> {}", input, once);
            prop_assert_eq!(n.normalize(&once).unwrap(), once.clone(), "{}", input);
            let scheme = Normalizer::new(Rung::Scheme).normalize(&input).unwrap();
            prop_assert_eq!(n.normalize(&scheme).unwrap(), once, "{}", input);
        }
    }
}

/// Web URLs built from the pieces the transforms work on.
fn web_url() -> impl Strategy<Value = String> {
    use proptest::collection::vec;
    let scheme = prop_oneof![Just("http"), Just("https"), Just("ws"), Just("HTTP")];
    let userinfo = prop_oneof![Just(""), Just("user:pw@"), Just("@")];
    let host = prop_oneof![
        Just("www.example.com"),
        Just("example.com."),
        Just("0x7f.1"),
        Just("127.0.0.1"),
        Just("www.www.a.b"),
        Just("www.b"),
        Just("[::1]"),
        Just("Www.x.org"),
        Just("%77ww.a.b"),
    ];
    let port = prop_oneof![Just(""), Just(":80"), Just(":443"), Just(":8080")];
    let segment = prop_oneof![
        Just(""),
        Just("a"),
        Just("index.html"),
        Just("x;jsessionid=0123456789abcdef0123"),
        Just("(S(abcdefghijklmnop1234))"),
        Just("%41b"),
        Just("B.c"),
        Just(".."),
        Just("%40"),
    ];
    let path = vec(segment, 0..5).prop_map(|s| s.iter().map(|s| format!("/{s}")).collect());
    let param = prop_oneof![
        Just("utm_source=x"),
        Just("b=2"),
        Just("a="),
        Just(""),
        Just("sid=0123456789abcdef01"),
        Just("%61=1"),
        Just("gclid=z"),
    ];
    let query = prop_oneof![
        Just(String::new()),
        vec(param, 0..4).prop_map(|p| format!("?{}", p.join("&"))),
    ];
    let fragment = prop_oneof![Just(""), Just("#"), Just("#top"), Just("#%41")];
    (scheme, userinfo, host, port, path, query, fragment).prop_map(
        |(scheme, userinfo, host, port, path, query, fragment): (_, _, _, _, String, String, _)| {
            format!("{scheme}://{userinfo}{host}{port}{path}{query}{fragment}")
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// `candidates` is conservative: a transform it leaves out leaves the
    /// scheme-rung form as it is.
    #[test]
    fn candidates_never_leave_out_a_change(
        input in prop_oneof![web_url(), reference().prop_map(|p| p.compose())],
    ) {
        let Ok(form) = Normalizer::new(Rung::Scheme).normalize(&input) else {
            return Ok(());
        };
        let uri = urinorm::UriRef::parse(&form).unwrap();
        for t in Transform::ALL {
            if !urinorm::normalize::protocol::candidates(&uri).any(|c| c == t) {
                prop_assert_eq!(only(&[t]).normalize(&form).unwrap(), form.clone(), "{}", t);
            }
        }
    }
}

/// A rules file of up to six random rules in urinorm's line format: every
/// pattern kind, every action, and rewrites that may break a URI or undo
/// a transform (those lines must be rejected, never written).
fn rules_text() -> impl Strategy<Value = String> {
    let pattern = prop_oneof![
        Just("*"),
        Just("example.com"),
        Just("=www.example.com"),
        Just("b"),
        Just("=127.0.0.1"),
        Just("x.org"),
    ];
    let action = prop_oneof![
        Just("drop-params b a"),
        Just("drop-params utm_* %61"),
        Just("keep-params b"),
        Just("keep-params *"),
        Just("lowercase-path"),
        Just("rewrite-path ^/a(/|$) /$1"),
        Just("rewrite-path index /"),
        Just("rewrite-path /+$ /"),
        Just("rewrite-path ^/(.*)$ /$1/"),
        Just("rewrite-path (?i)b %7e"),
        Just("rewrite-path \\. \\x20"),
        Just("rewrite-path ^/ //"),
    ];
    proptest::collection::vec((pattern, action), 0..6)
        .prop_map(|rules| rules.iter().map(|(p, a)| format!("{p} {a}\n")).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// With random rule sets on top of a preset: whatever is written is a
    /// URI, a fixed point, and the same from the scheme rung's form.
    #[test]
    fn rules_keep_the_protocol_rung_a_fixed_point_and_monotone(
        input in prop_oneof![web_url(), reference().prop_map(|p| p.compose())],
        text in rules_text(),
        preset in 0..PRESETS.len(),
    ) {
        use urinorm::rules::{RulesFormat, RulesText, SiteRules};
        let rules = SiteRules::compile(&[RulesText { name: "r".into(), format: RulesFormat::Lines, text: text.clone() }])
            .expect("the generated rules are well formed");
        let n = Normalizer::with_protocol(Protocol::from(PRESETS[preset])).with_rules(rules.into_rewrite());
        if let Ok(once) = n.normalize(&input) {
            prop_assert!(urinorm::UriRef::parse(&once).is_ok(), "{} -> {}\n{}", input, once, text);
            prop_assert_eq!(n.normalize(&once).unwrap(), once.clone(), "{}\n{}", input, text);
            let scheme = Normalizer::new(Rung::Scheme).normalize(&input).unwrap();
            prop_assert_eq!(n.normalize(&scheme).unwrap(), once, "{}\n{}", input, text);
        }
    }
}
