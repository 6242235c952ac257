//! Property tests of the ladder over references generated from the grammar:
//! idempotence, monotonicity, re-parsing, and the syntax rung against a naive
//! oracle written from the text of §6.2.2.

use crate::common::grammar::reference;
use proptest::prelude::*;
use urinorm::normalize::{Normalizer, Rung};
use urinorm::{HostKind, UriRef};

fn at(rung: Rung, input: &str) -> Option<String> {
    Normalizer::new(rung).normalize(input).ok()
}

/// §6.2.2.1 and §6.2.2.2 by string replacement: decode `%XX` of unreserved
/// characters, upper-case the hex of the others.
fn naive_percent(s: &str) -> String {
    let re = regex::Regex::new("%([0-9A-Fa-f]{2})").unwrap();
    re.replace_all(s, |c: &regex::Captures<'_>| {
        let byte = u8::from_str_radix(&c[1], 16).unwrap();
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            (byte as char).to_string()
        } else {
            format!("%{}", c[1].to_uppercase())
        }
    })
    .into_owned()
}

/// §5.2.4 by whole segments, as a person would do it on paper.
fn naive_remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

/// A host lower-cased outside its `%XX` triplets.
fn lowercase_outside_triplets(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            out.push(c);
            out.extend(chars.by_ref().take(2));
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// The syntax rung's output must equal the input with only case, `%XX`,
/// dot segments, an empty port's `:` and IP-literal text changed.
fn check_syntax_oracle(input: &UriRef<'_>, output: &UriRef<'_>) {
    assert_eq!(
        output.scheme(),
        input.scheme().map(str::to_ascii_lowercase).as_deref()
    );
    assert_eq!(
        output.userinfo(),
        input.userinfo().map(naive_percent).as_deref()
    );
    match input.host_kind() {
        Some(HostKind::RegName) => {
            let host = lowercase_outside_triplets(&naive_percent(input.host().unwrap()));
            assert_eq!(output.host(), Some(host.as_str()));
        }
        Some(HostKind::IpvFuture) => {
            assert_eq!(
                output.host(),
                input.host().map(str::to_ascii_lowercase).as_deref()
            );
        }
        kind => assert_eq!(output.host_kind(), kind),
    }
    assert_eq!(output.port(), input.port().filter(|p| !p.is_empty()));
    let mut path = naive_percent(input.path());
    if input.scheme().is_some() && path.starts_with('/') {
        path = naive_remove_dots(&path);
        if input.authority().is_none() && path.starts_with("//") {
            path.insert_str(0, "/.");
        }
    }
    assert_eq!(output.path(), path);
    assert_eq!(output.query(), input.query().map(naive_percent).as_deref());
    assert_eq!(
        output.fragment(),
        input.fragment().map(naive_percent).as_deref()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn every_rung_is_idempotent_and_reparses(parts in reference()) {
        let input = parts.compose();
        for rung in Rung::ALL {
            if let Some(once) = at(rung, &input) {
                prop_assert!(UriRef::parse(&once).is_ok(), "{rung} {input} -> {once}");
                prop_assert_eq!(at(rung, &once), Some(once.clone()), "{} {}", rung, input);
            }
        }
    }

    /// Equal at rung k implies equal at rung k+1: normalizing at k first
    /// never changes what k+1 makes of a reference.
    #[test]
    fn rungs_are_monotonic(parts in reference()) {
        let input = parts.compose();
        for pair in Rung::ALL.windows(2) {
            let (lower, higher) = (pair[0], pair[1]);
            if let (Some(low), Some(high)) = (at(lower, &input), at(higher, &input)) {
                prop_assert_eq!(at(higher, &low), Some(high), "{} then {} on {}", lower, higher, input);
            }
        }
    }

    #[test]
    fn syntax_rung_matches_the_naive_oracle(parts in reference()) {
        let input = parts.compose();
        let output = at(Rung::Syntax, &input).expect("the syntax rung rejects nothing the parser accepts");
        check_syntax_oracle(&UriRef::parse(&input).unwrap(), &UriRef::parse(&output).unwrap());
    }
}
