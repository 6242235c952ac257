//! The `ia` preset and `--key surt` against every group of urlcanon's
//! `surt.json` (the Internet Archive's canonicalizers' own tests, as IIPC's
//! urlcanon carries them): keys must be the CDX keys, byte for byte, except
//! where urinorm deliberately differs (listed, with the reason; the README's
//! table says the same).
//!
//! Groups that test one canonicalizer step alone (Google's, IA's, a helper
//! function) are checked as equivalences: the input and the step's expected
//! output must get the same key, since the default key is IA's step after
//! Google's, and each is idempotent on the other's output.

use serde_json::Value;
use urinorm::UriRef;
use urinorm::line::key::KeyFormat;
use urinorm::normalize::protocol::{Preset, Protocol, Transform};
use urinorm::normalize::{Normalizer, Scratch};
use urinorm::surt::write_surt;

fn ia() -> Normalizer {
    Normalizer::with_protocol(Protocol::from("ia".parse::<Preset>().unwrap()))
}

/// The `--key surt --preset ia` key, or why the line is rejected.
fn key(input: &str) -> Result<String, String> {
    let mut out = Vec::new();
    KeyFormat::Surt
        .write(&ia(), input.as_bytes(), &mut out, &mut Scratch::default())
        .map_err(|e| e.to_string())?;
    Ok(String::from_utf8(out).unwrap())
}

fn vectors(group: &str) -> Vec<(String, String)> {
    let all = crate::common::json("conformance/urlcanon/surt.json");
    let Value::Object(group) = &all[group] else {
        panic!("no group {group}");
    };
    group
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// The key of `input` after `--lenient`'s repairs (IA repairs what it is
/// given: spaces, tabs, a stray `%` or `#`), and whether it needed them.
fn lenient_key(input: &str) -> (Result<String, String>, bool) {
    let mut repaired = Vec::new();
    urinorm::lenient::repair(input.as_bytes(), &mut repaired);
    if repaired.is_empty() {
        return (key(input), false);
    }
    (key(&String::from_utf8_lossy(&repaired)), true)
}

/// Where urinorm differs from IA on urlcanon's inputs, even with
/// `--lenient`, and why.
const DIFFERENCES: &[(&str, &str)] = &[
    (
        "",
        "an empty line is blank, skipped and counted, not a URI with the key '-'",
    ),
    (
        "filedesc://foo.arc.gz",
        "IA passes its own filedesc: records through by name; urinorm gives every URI with a host a SURT",
    ),
    (
        "www.google.com/",
        "no scheme: IA guesses http://, urinorm reads a relative reference and rejects it (no base)",
    ),
    ("www.google.com", "no scheme, as above"),
    ("%20leadingspace.com/", "no scheme, as above"),
    ("Bücher.ch:8080", "no scheme, as above"),
    ("â\u{98}\u{83}.com", "no scheme, as above"),
    (
        "http://\u{1}\u{80}.com/",
        "a control in a host: UTS #46 refuses it, IA encodes it",
    ),
    (
        "http://www.t%EF%BF%BD%04.82.net/",
        "a host of U+FFFD and a control: UTS #46 refuses it, IA keeps it encoded",
    ),
];

fn difference(input: &str) -> Option<&'static str> {
    DIFFERENCES
        .iter()
        .find(|(i, _)| *i == input)
        .map(|(_, reason)| *reason)
}

/// `defaultIASurt`: the keys themselves.
#[test]
fn default_ia_surt_keys() {
    let mut agreed = 0;
    for (input, expected) in vectors("defaultIASurt") {
        if difference(&input).is_some() {
            continue;
        }
        assert_eq!(key(&input).as_deref(), Ok(expected.as_str()), "{input}");
        agreed += 1;
    }
    assert_eq!(agreed, 14);
}

/// `Canonicalizer.DefaultIA` and `Canonicalizer.IA`: the canonical form
/// itself, where IA's URI is one (it keeps the scheme).
#[test]
fn ia_canonical_forms() {
    let mut agreed = 0;
    for group in ["Canonicalizer.DefaultIA", "Canonicalizer.IA"] {
        for (input, expected) in vectors(group) {
            assert_eq!(
                ia().normalize(&input).as_deref(),
                Ok(expected.as_str()),
                "{input}"
            );
            agreed += 1;
        }
    }
    assert_eq!(agreed, 14);
}

/// The groups of one step or function: input and expected output share a
/// key. Function-level inputs are put where the function works (a host,
/// a path, a query). Inputs that are no URI are repaired as `--lenient`
/// repairs them, as IA does, and counted.
#[test]
fn single_steps_give_the_key_of_their_output() {
    let (mut agreed, mut repaired, mut differed) = (0, 0, 0);
    for (group, wrap) in [
        ("google", "{}"),
        ("googleSupplementalFromSurt", "{}"),
        ("massageHost", "http://{}/"),
        ("stripPathSessionId", "http://h{}"),
        ("alphaRorderQuery", "http://h/?{}"),
    ] {
        for (input, expected) in vectors(group) {
            let (input, expected) = (wrap.replace("{}", &input), wrap.replace("{}", &expected));
            let ((got, needed_repair), (want, _)) = (lenient_key(&input), lenient_key(&expected));
            if let Some(reason) = difference(&input) {
                assert!(
                    got.is_err() || got != want,
                    "{input} is listed ({reason}) but agrees"
                );
                differed += 1;
                continue;
            }
            assert!(got.is_ok(), "{group}: {input}: {got:?}");
            assert_eq!(got, want, "{group}: {input} vs {expected}");
            agreed += 1;
            repaired += usize::from(needed_repair);
        }
    }
    assert_eq!((agreed, repaired, differed), (50, 5, 7));
}

/// IA keys for what urlcanon's vectors do not show: IPv4 hosts reversed,
/// hex in lower case, characters a URI cannot hold raw written raw in the
/// key, while the canonical form stays a valid URI.
#[test]
fn cdx_spelling_keeps_the_canonical_form_a_uri() {
    let input = "http://WWW2.Example.COM/A%7Cb/%C3%A9%3Fx?Q%5B%5D=%22v%22&B=1#f";
    assert_eq!(
        ia().normalize(input).unwrap(),
        "http://example.com/a%7Cb/%C3%A9%3Fx?b=1&q%5B%5D=%22v%22"
    );
    assert_eq!(
        key(input).unwrap(),
        "com,example)/a|b/%c3%a9?x?b=1&q[]=\"v\""
    );
    assert_eq!(key("http://192.0.2.1:8080/a").unwrap(), "1,2,0,192:8080)/a");
    assert_eq!(key("http://[::1]/a").unwrap(), "[::1])/a");
    let mut without = Protocol::from("ia".parse::<Preset>().unwrap());
    without.remove(Transform::CdxSpelling);
    let mut out = Vec::new();
    KeyFormat::Surt
        .write(
            &Normalizer::with_protocol(without),
            input.as_bytes(),
            &mut out,
            &mut Scratch::default(),
        )
        .unwrap();
    assert_eq!(out, b"com,example)/a%7Cb/%C3%A9%3Fx?b=1&q%5B%5D=%22v%22");
}

/// The SURT layout alone (`write_surt`) of `input`.
fn surt(input: &str) -> String {
    let mut out = Vec::new();
    write_surt(&UriRef::parse(input).unwrap(), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn surt_layout_alone_keeps_ip_hosts_and_ports() {
    assert_eq!(surt("http://192.0.2.1:8080/a"), "192.0.2.1:8080)/a");
    assert_eq!(surt("http://[::1]/a"), "[::1])/a");
    assert_eq!(surt("mailto:a@b.c"), "mailto:a@b.c");
}

/// The root's dot is no label: `summa.cash.` is `cash,summa`, not
/// `,cash,summa`; a host of dots alone keeps them.
#[test]
fn a_trailing_root_dot_adds_no_label() {
    assert_eq!(surt("http://summa.cash./"), "cash,summa)/");
    assert_eq!(surt("http://summa.cash/"), "cash,summa)/");
    assert_eq!(surt("http://a..b/"), "b,,a)/");
    assert_eq!(surt("http://./"), ",)/");
}
