//! Property tests: references generated from the Appendix A grammar parse into
//! the parts they were built from, recompose to the same bytes (§5.3), and
//! split the way the Appendix B regular expression splits them.

use proptest::prelude::*;
use regex::Regex;
use urinorm::UriRef;

const PCT: &str = "%[0-9A-Fa-f]{2}";

/// A regex for `*( <set> / pct-encoded )` of at most `max` items.
fn chars(set: &str, max: usize) -> String {
    format!("([{set}]|{PCT}){{0,{max}}}")
}

const UNRESERVED_SUB: &str = "-A-Za-z0-9._~!$&'()*+,;=";

/// The strings a regex matches, as a strategy.
fn re(pattern: &str) -> proptest::string::RegexGeneratorStrategy<String> {
    proptest::string::string_regex(pattern).unwrap()
}

fn segment() -> String {
    chars(&format!("{UNRESERVED_SUB}:@"), 6)
}

fn segment_nz() -> String {
    format!("([{UNRESERVED_SUB}:@]|{PCT}){{1,6}}")
}

fn segment_nz_nc() -> String {
    format!("([{UNRESERVED_SUB}@]|{PCT}){{1,6}}")
}

fn ipv6() -> impl Strategy<Value = String> {
    (
        prop::array::uniform8(any::<u16>()),
        0usize..8,
        0usize..9,
        any::<bool>(),
    )
        .prop_map(|(pieces, from, len, v4)| {
            let hex: Vec<String> = pieces.iter().map(|p| format!("{p:X}")).collect();
            let mut text = if len > 0 && from + len <= 8 {
                format!("{}::{}", hex[..from].join(":"), hex[from + len..].join(":"))
            } else {
                hex.join(":")
            };
            // ls32 as dotted IPv4 when the last two pieces are written out.
            if v4 && !text.ends_with("::") && (from + len < 7 || len == 0) {
                let cut = text.rfind(':').unwrap();
                let cut = text[..cut].rfind(':').unwrap();
                let [a, b] = pieces[6].to_be_bytes();
                let [c, d] = pieces[7].to_be_bytes();
                text = format!("{}:{a}.{b}.{c}.{d}", &text[..cut]);
            }
            format!("[{text}]")
        })
}

fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::array::uniform4(any::<u8>()).prop_map(|o| o.map(|x| x.to_string()).join(".")),
        ipv6(),
        "\\[[vV][0-9a-fA-F]{1,3}\\.[A-Za-z0-9._~!$&'()*+,;=:-]{1,8}\\]",
        re(&chars(UNRESERVED_SUB, 12)),
    ]
}

/// The parts of a reference built from the grammar, before they are joined.
#[derive(Debug, Clone)]
struct Parts {
    scheme: Option<String>,
    authority: Option<String>,
    path: String,
    query: Option<String>,
    fragment: Option<String>,
}

impl Parts {
    fn compose(&self) -> String {
        let mut s = String::new();
        if let Some(x) = &self.scheme {
            s += &format!("{x}:");
        }
        if let Some(x) = &self.authority {
            s += &format!("//{x}");
        }
        s += &self.path;
        if let Some(x) = &self.query {
            s += &format!("?{x}");
        }
        if let Some(x) = &self.fragment {
            s += &format!("#{x}");
        }
        s
    }
}

fn reference() -> impl Strategy<Value = Parts> {
    let scheme = prop::option::of("[A-Za-z][A-Za-z0-9+.-]{0,5}");
    let userinfo = prop::option::of(re(&chars(&format!("{UNRESERVED_SUB}:"), 8)));
    let port = prop::option::of("[0-9]{0,5}");
    let authority = prop::option::of((userinfo, host(), port).prop_map(|(u, h, p)| {
        let u = u.map(|u| format!("{u}@")).unwrap_or_default();
        let p = p.map(|p| format!(":{p}")).unwrap_or_default();
        format!("{u}{h}{p}")
    }));
    let tail = format!("(/{}){{0,4}}", segment());
    let abempty = tail.clone();
    let absolute = format!("/({}{tail})?", segment_nz());
    let rootless = format!("{}{tail}", segment_nz());
    let noscheme = format!("{}{tail}", segment_nz_nc());
    let query = prop::option::of(re(&chars(&format!("{UNRESERVED_SUB}:@/?"), 10)));
    let fragment = prop::option::of(re(&chars(&format!("{UNRESERVED_SUB}:@/?"), 10)));
    (scheme, authority, 0..3usize, query, fragment).prop_flat_map(
        move |(scheme, authority, path_form, query, fragment)| {
            // §3.3 / §4.2: which path rules may follow depends on what precedes.
            let path_regex = match (&authority, path_form) {
                (Some(_), _) => abempty.clone(),
                (None, 0) => absolute.clone(),
                (None, 1) if scheme.is_some() => rootless.clone(),
                (None, 1) => noscheme.clone(),
                (None, _) => String::new(),
            };
            let parts = (scheme, authority, query, fragment);
            (Just(parts), re(&path_regex)).prop_map(
                |((scheme, authority, query, fragment), path)| Parts {
                    scheme,
                    authority,
                    path,
                    query,
                    fragment,
                },
            )
        },
    )
}

/// RFC 3986 Appendix B, verbatim.
fn appendix_b() -> Regex {
    Regex::new(r"^(([^:/?#]+):)?(//([^/?#]*))?([^?#]*)(\?([^#]*))?(#(.*))?").unwrap()
}

/// Checks that `uri` splits as Appendix B splits `text` and recomposes to it.
fn agrees_with_appendix_b(regex: &Regex, text: &str, uri: &UriRef<'_>) {
    let caps = regex.captures(text).unwrap();
    let group = |n| caps.get(n).map(|m| m.as_str());
    assert_eq!(uri.scheme(), group(2), "scheme of {text}");
    assert_eq!(uri.authority(), group(4), "authority of {text}");
    assert_eq!(Some(uri.path()), group(5), "path of {text}");
    assert_eq!(uri.query(), group(7), "query of {text}");
    assert_eq!(uri.fragment(), group(9), "fragment of {text}");
    let mut recomposed = String::new();
    uri.recompose_into(&mut recomposed);
    assert_eq!(recomposed, text);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn grammar_references_parse_into_their_parts(parts in reference()) {
        let text = parts.compose();
        let uri = UriRef::parse(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        prop_assert_eq!(uri.scheme(), parts.scheme.as_deref());
        prop_assert_eq!(uri.authority(), parts.authority.as_deref());
        prop_assert_eq!(uri.path(), parts.path.as_str());
        prop_assert_eq!(uri.query(), parts.query.as_deref());
        prop_assert_eq!(uri.fragment(), parts.fragment.as_deref());
        agrees_with_appendix_b(&appendix_b(), &text, &uri);
    }

    #[test]
    fn any_bytes_either_fail_or_round_trip(bytes in prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(b"aZ09:/?#[]@%.-_~!$&'()*+,;=vF ".to_vec()),
            1 => any::<u8>(),
        ],
        0..40,
    )) {
        if let Ok(uri) = UriRef::parse_bytes(&bytes) {
            agrees_with_appendix_b(&appendix_b(), std::str::from_utf8(&bytes).unwrap(), &uri);
        }
    }
}
