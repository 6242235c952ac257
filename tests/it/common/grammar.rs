//! A proptest generator of URI references built from the Appendix A grammar.

use proptest::prelude::*;

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

/// A segment, often a dot segment (`.`, `..`, or encoded `%2E`) to exercise §5.2.4.
fn segment() -> String {
    format!(
        "(\\.|\\.\\.|%2[eE]|\\.%2[eE]|{})",
        chars(&format!("{UNRESERVED_SUB}:@"), 6)
    )
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
pub struct Parts {
    pub scheme: Option<String>,
    pub authority: Option<String>,
    pub path: String,
    pub query: Option<String>,
    pub fragment: Option<String>,
}

impl Parts {
    pub fn compose(&self) -> String {
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

pub fn reference() -> impl Strategy<Value = Parts> {
    let scheme = prop::option::of(prop_oneof![
        re("[A-Za-z][A-Za-z0-9+.-]{0,5}"),
        prop::sample::select(
            [
                "http", "HTTP", "https", "HtTpS", "ws", "wss", "ftp", "file", "FILE", "mailto",
                "urn", "URN"
            ]
            .map(String::from)
            .to_vec()
        ),
    ]);
    let userinfo = prop::option::of(re(&chars(&format!("{UNRESERVED_SUB}:"), 8)));
    let port = prop::option::of(prop_oneof![re("[0-9]{0,5}"), re("0*(80|443|21)")]);
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
