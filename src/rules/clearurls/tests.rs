//! Tests of the ClearURLs list: its shortcuts (the prefilter, the site
//! form, the name starts, the memo) against trying every provider, and
//! each piece on its own.

use super::literals::{authority_literal, label_start_literal, required_literal};
use super::load::{any_of, expression};
use super::matching::{NameStarts, Shape, Verdicts, site_matches};
use super::prefilter::{LabelStarts, Literals};
use super::*;
/// The same providers with every shortcut off: each provider tried,
/// its pattern run, every name and URI given to the expressions (and,
/// given a fresh scratch, nothing remembered from another URI).
fn naive(providers: &mut Providers) {
    let every = providers.list.len();
    let prefilter = providers.prefilter.as_mut().unwrap();
    prefilter.always = (0..every).collect();
    prefilter.label_starts = LabelStarts::new(Vec::new());
    prefilter.in_authority = Literals::new(Vec::new()).unwrap();
    prefilter.anywhere = Literals::new(Vec::new()).unwrap();
    for provider in &mut providers.list {
        provider.shape = Shape::Expression;
        provider.field_starts = None;
        for guarded in [&mut provider.exceptions, &mut provider.redirections]
            .into_iter()
            .flatten()
        {
            guarded.literals = None;
        }
    }
}

/// The benchmark list on the sample's lines, and on each with a
/// parameter of every rule name appended: the shortcuts change nothing.
/// The fast list keeps one scratch through the lines, as a thread does,
/// so that what it remembers of a line serves the next; the naive one
/// starts each line afresh.
#[test]
fn shortcuts_agree_with_trying_every_provider() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let list = std::fs::read_to_string(root.join("rules/bench-clearurls.json")).unwrap();
    let sample = std::fs::read_to_string(root.join("sample/urls.txt")).unwrap();
    let compile = || {
        let mut providers = Providers::default();
        providers.add("list", &list).unwrap();
        providers.finish(0).unwrap();
        providers
    };
    let (fast, mut slow) = (compile(), compile());
    naive(&mut slow);
    let scheme = crate::normalize::Normalizer::new(crate::normalize::Rung::Scheme);
    let mut kept = Scratch::default();
    let mut checked = 0;
    for line in sample.lines() {
        let Ok(uri) = scheme.normalize(line) else {
            continue;
        };
        let joint = if uri.contains('?') { '&' } else { '?' };
        for uri in [
            uri.clone(),
            format!("{uri}{joint}utm_x=1&ref=2&si=3&gclid=4&q=5"),
        ] {
            let Some(parts) = WebParts::of(uri.as_bytes()) else {
                continue;
            };
            let run = |providers: &Providers, scratch: &mut Scratch| {
                let mut out = uri.as_bytes().to_vec();
                let mut fired = Vec::new();
                let (events, _) = providers.apply(&mut out, 0, parts.clone(), scratch, &mut |id| {
                    fired.push(id)
                });
                (out, fired, events)
            };
            assert_eq!(
                run(&fast, &mut kept),
                run(&slow, &mut Scratch::default()),
                "{uri}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 7964);
}

#[test]
fn required_literals_are_in_every_match() {
    let literal = |p: &str| required_literal(p).map(|l| String::from_utf8(l).unwrap());
    let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
    assert_eq!(literal(amazon).as_deref(), Some("amazon"));
    assert_eq!(
        literal(r"^https?:\/\/(?:www\.)?google\.com\/url").as_deref(),
        Some("google.com/url")
    );
    // Alternatives, classes and short pieces require no literal.
    assert_eq!(literal(".*"), None);
    assert_eq!(literal(""), None);
    assert_eq!(literal("a|b"), None);
    assert_eq!(literal(r"^https?:\/\/(?:a|bb)\.ly").as_deref(), Some(".ly"));
    assert_eq!(
        literal(r"^https?:\/\/(?:[a-z0-9-]+\.)*?bbc(?:\.[a-z]{2,}){1,}").as_deref(),
        Some("bbc")
    );
}

#[test]
fn authority_literals_are_in_the_authority_of_every_match() {
    let literal = |p: &str| authority_literal(p).map(|l| String::from_utf8(l).unwrap());
    let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
    assert_eq!(literal(amazon).as_deref(), Some("amazon"));
    // After a piece that can pass the authority, a literal may be anywhere.
    assert_eq!(literal(r"^https?:\/\/.*?amazon"), None);
    assert_eq!(literal(r"^https?:\/\/[^?]*amazon"), None);
    // A literal past the authority's end is not in it.
    assert_eq!(
        literal(r"^https?:\/\/(?:www\.)?google\.com\/url").as_deref(),
        None
    );
    assert_eq!(
        literal(r"^https?:\/\/(?:www\.)?google\.com").as_deref(),
        Some("google.com")
    );
    // Not anchored at a web scheme: no authority to look in.
    assert_eq!(literal(r"amazon\.com"), None);
    let authority = |uri: &'static [u8]| &uri[WebParts::of(uri).unwrap().authority];
    assert_eq!(authority(b"https://u@a.example:80/p?q"), b"u@a.example:80");
    assert_eq!(authority(b"http://a?q/"), b"a");
}

#[test]
fn label_start_literals_start_a_label_in_every_match() {
    let literal = |p: &str| label_start_literal(p).map(|l| String::from_utf8(l).unwrap());
    let amazon = r"^https?:\/\/(?:[a-z0-9-]+\.)*?amazon(?:\.[a-z]{2,}){1,}";
    assert_eq!(literal(amazon).as_deref(), Some("amazon"));
    assert_eq!(
        literal(r"^https?:\/\/spa\.example").as_deref(),
        Some("spa.example")
    );
    assert_eq!(
        literal(r"^https?:\/\/(?:www\.)?(?:m\.|[a-z]+\.)*google\.com").as_deref(),
        Some("google.com")
    );
    // Pieces before it that may end elsewhere than after a `.`.
    assert_eq!(literal(r"^https?:\/\/[a-z0-9-]*amazon\.com"), None);
    assert_eq!(literal(r"^https?:\/\/(?:[a-z]+\.|x)*amazon\.com"), None);
    assert_eq!(literal(r"^https?:\/\/(?:www)?amazon\.com"), None);
    // Past the authority, or not in it at all.
    assert_eq!(literal(r"^https?:\/\/google\.com\/url"), None);
    assert_eq!(literal(r"amazon\.com"), None);
}

/// The site form's patterns match as their expressions do.
#[test]
fn site_shapes_match_as_their_expressions() {
    let pattern = |literal: &str| {
        let [before, after] = Shape::TEMPLATE;
        format!("{before}{literal}{after}")
    };
    let amazon = pattern("amazon");
    assert!(matches!(Shape::of(&amazon), Shape::Site(l) if l == b"amazon"));
    assert!(matches!(Shape::of(&pattern(r"e\-passport")), Shape::Site(l) if l == b"e-passport"));
    assert!(matches!(Shape::of(".*"), Shape::EveryUri));
    assert!(matches!(Shape::of(""), Shape::EveryUri));
    assert!(matches!(Shape::of(&pattern("a|b")), Shape::Expression));
    assert!(matches!(Shape::of(&pattern("[ab]c")), Shape::Expression));
    assert!(matches!(
        Shape::of(&format!("{amazon}x")),
        Shape::Expression
    ));
    let expression = expression("urlPattern", &amazon).unwrap();
    for uri in [
        "https://amazon.de",
        "HTTP://www.AMAZON.co.uk/x",
        "https://a-b.c1.amazon.de?q",
        "https://amazon.d",
        "https://amazon.d1",
        "https://xamazon.de",
        "https://a..amazon.de",
        "https://.amazon.de",
        "https://a_b.amazon.de",
        "https://u@amazon.de",
        "https://amazon.amazon.de",
        "https://amazon",
        "ftp://amazon.de",
        "https:/amazon.de",
        "https://x/amazon.de",
        "wss://amazon.de",
        "",
    ] {
        assert_eq!(
            site_matches(b"amazon", uri.as_bytes()),
            expression.is_match(uri.as_bytes()),
            "{uri}"
        );
    }
}

proptest::proptest! {
    /// Any URI of the bytes that matter to the site form: it matches
    /// as the expression does.
    #[test]
    fn site_form_agrees_with_the_expression(
        uri in "(?:[hH][tT][tT][pP][sS]?:)?(?://)?(?:[aA.zZ0_/@-]|ab|AB){0,12}",
    ) {
        let [before, after] = Shape::TEMPLATE;
        let expression = expression("urlPattern", &format!("{before}ab{after}")).unwrap();
        proptest::prop_assert_eq!(
            site_matches(b"ab", uri.as_bytes()),
            expression.is_match(uri.as_bytes())
        );
    }
}

/// Literals in and out of the start of labels, for the providers
/// tried: every provider whose literal starts a label is found.
#[test]
fn label_starts_find_the_literals_that_start_a_label() {
    let starts = LabelStarts::new(vec![
        (b"amazon".to_vec(), 0),
        (b"zon".to_vec(), 1),
        (b"ex.co".to_vec(), 2),
    ]);
    let found = |authority: &[u8]| {
        let mut owners = Vec::new();
        starts.find(authority, &mut owners);
        owners.sort_unstable();
        owners.dedup();
        owners
    };
    assert_eq!(found(b"www.AMAZON.de"), [0]);
    assert_eq!(found(b"amazon"), [0]);
    assert_eq!(found(b"amazo"), Vec::<usize>::new());
    assert_eq!(found(b"zon.de"), [1]);
    assert_eq!(found(b"notamazon.de"), Vec::<usize>::new());
    assert_eq!(found(b"u.x.ex.com:80"), [2]);
    // After the userinfo is no label start: a pattern whose literal
    // follows only a `.` or the `//` does not match there.
    assert_eq!(found(b"u@ex.com"), Vec::<usize>::new());
    assert_eq!(found(b""), Vec::<usize>::new());
    assert_eq!(found(b"a..ex.co."), [2]);
}

/// The name starts never turn away a name the expression matches: the
/// benchmark list's field expressions against names that match them
/// and names that do not.
#[test]
fn name_starts_pass_every_name_that_matches() {
    let texts = [
        "utm_[a-z]+",
        "ref_?",
        "[?&]gclid",
        "wt_?z?mc",
        "vn(?:_[a-z]*)+",
        "si",
        "hsCtaTracking",
        "__s",
        "action_(?:object|type|ref)_map",
    ];
    let starts = NameStarts::of(&texts).unwrap();
    let fields = any_of("rules", &texts, true).unwrap().unwrap();
    for name in [
        "utm_source",
        "UTM_Medium",
        "ref",
        "ref_",
        "?gclid",
        "&GCLID",
        "wtmc",
        "wt_zmc",
        "vn_a_b",
        "si",
        "hsctatracking",
        "__s",
        "action_type_map",
        "q",
        "id",
        "page",
        "s",
        "",
        "gclid",
        "referrer",
        "sid",
    ] {
        if fields.is_match(name.as_bytes()) {
            assert!(starts.may_match(name.as_bytes()), "{name}");
        }
    }
    for name in ["q", "id", "page", "", "gclid", "x"] {
        assert!(!starts.may_match(name.as_bytes()), "{name}");
    }
    // An alternative that starts with a class of many letters: unknown.
    assert!(NameStarts::of(&["[a-z]+_id"]).is_none());
}

/// One scratch kept through two lists whose first provider is the same
/// (index 0) but not its fields, taken in turns: each list's verdicts
/// and candidates are its own.
#[test]
fn the_memo_serves_only_the_list_it_was_made_for() {
    let compile = |field: &str| {
        let text = format!(
            r#"{{"providers":{{"g":{{"urlPattern":".*","rules":["{field}"]}},
            "h":{{"urlPattern":"^https?:\\/\\/(?:[a-z0-9-]+\\.)*?{field}site\\.example","rules":["x"]}}}}}}"#
        );
        let mut providers = Providers::default();
        providers.add("list", &text).unwrap();
        providers.finish(0).unwrap();
        providers
    };
    let (a, b) = (compile("a"), compile("b"));
    let mut scratch = Scratch::default();
    for _ in 0..3 {
        for (providers, expected) in [
            (&a, "https://asite.example/?b=2"),
            (&b, "https://asite.example/?a=1&x=3"),
        ] {
            let uri = b"https://asite.example/?a=1&b=2&x=3";
            let mut out = uri.to_vec();
            let parts = WebParts::of(uri).unwrap();
            providers.apply(&mut out, 0, parts, &mut scratch, &mut |_| {});
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}

/// A name's verdict is the expression's, whether remembered, forgotten
/// (past [`Verdicts::ENTRIES`]) or too long to remember.
#[test]
fn verdicts_are_the_expressions() {
    let fields = any_of("rules", &["utm_[a-z]+", "ref_?", "x"], true)
        .unwrap()
        .unwrap();
    let mut verdicts = Verdicts::default();
    let long = "utm_".to_string() + &"a".repeat(Verdicts::NAME_BYTES);
    for round in 0..3 {
        for i in 0..Verdicts::ENTRIES + 10 {
            for name in [
                format!("utm_{i}"),
                format!("{i}"),
                "ref".into(),
                long.clone(),
            ] {
                // Provider 1 has no field: the same name, another verdict.
                for (provider, expected) in [(0, fields.is_match(name.as_bytes())), (1, false)] {
                    let got = verdicts.is_field(provider, name.as_bytes(), |n| {
                        provider == 0 && fields.is_match(n)
                    });
                    assert_eq!(got, expected, "{name} {provider} {round}");
                }
            }
        }
        assert!(verdicts.known.len() <= Verdicts::ENTRIES);
    }
}

proptest::proptest! {
    /// Any names, in any order, with repeats: the remembered verdicts
    /// are the expression's.
    #[test]
    fn verdicts_agree_with_the_expression(
        names in proptest::collection::vec(
            ("[0-2]", "(?:[uUtTmM_%+]|utm_|ref){0,4}"),
            0..200,
        ),
    ) {
        let fields = [
            any_of("rules", &["utm_[a-z]+", "ref_?"], true).unwrap().unwrap(),
            any_of("rules", &["m", "u%"], true).unwrap().unwrap(),
            any_of("rules", &["[a-z_]+"], true).unwrap().unwrap(),
        ];
        let mut verdicts = Verdicts::default();
        for (provider, name) in &names {
            let provider: usize = provider.parse().unwrap();
            let expected = fields[provider].is_match(name.as_bytes());
            let got = verdicts.is_field(provider, name.as_bytes(), |n| fields[provider].is_match(n));
            proptest::prop_assert_eq!(got, expected);
        }
    }
}
