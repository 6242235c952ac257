//! `rules`: bytes split at the first NUL into a rules text and URIs (one a
//! line). The text is compiled as urinorm's line format, or as a ClearURLs
//! file when it starts with `{`:
//! - compiling never panics: it gives rules or a `RulesError` whose message
//!   starts with the file's name and holds no control byte;
//! - with rules, each URI normalized at the protocol rung (`safe` and
//!   `aggressive`) with them, when accepted: re-parses, is a fixed point,
//!   and is what the scheme rung's form gives (monotone); a rejection by a
//!   rule names it (`rule r…`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::UriRef;
use urinorm::normalize::protocol::{PRESETS, Protocol};
use urinorm::normalize::{NormalizeError, Normalizer, Rung, Scratch};
use urinorm::rules::{RulesFormat, RulesText, SiteRules};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == 0).unwrap_or(data.len());
    let Ok(text) = std::str::from_utf8(&data[..split]) else {
        return;
    };
    let format = match text.starts_with('{') {
        true => RulesFormat::ClearUrls,
        false => RulesFormat::Lines,
    };
    let texts = [RulesText { name: "r".into(), format, text: text.to_string() }];
    let rules = match SiteRules::compile(&texts) {
        Ok(rules) => rules,
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("r:") || message.starts_with("the ClearURLs files"), "{message}");
            assert!(!message.bytes().any(|b| b < 0x20 || b == 0x7f), "{message:?}");
            return;
        }
    };
    let uris = data.get(split + 1..).unwrap_or_default();
    let scheme = Normalizer::new(Rung::Scheme);
    for preset in PRESETS {
        let n = Normalizer::with_protocol(Protocol::from(*preset)).with_rules(rules.clone().into_rewrite());
        for uri in uris.split(|&b| b == b'\n') {
            let mut once = Vec::new();
            match n.normalize_into(uri, &mut once, &mut Scratch::default()) {
                Ok(_) => {
                    let parsed = UriRef::parse_bytes(&once);
                    assert!(parsed.is_ok(), "{uri:?} -> {once:?}");
                    let mut again = Vec::new();
                    n.normalize_into(&once, &mut again, &mut Scratch::default()).expect("the output is accepted again");
                    assert_eq!(again, once, "not a fixed point: {uri:?}");
                    let mut form = Vec::new();
                    scheme.normalize_into(uri, &mut form, &mut Scratch::default()).expect("the scheme rung accepts what protocol does");
                    let mut from_form = Vec::new();
                    n.normalize_into(&form, &mut from_form, &mut Scratch::default()).expect("the scheme form is accepted");
                    assert_eq!(from_form, once, "not monotone: {uri:?}");
                }
                Err(NormalizeError::Rule(refusal)) => {
                    assert!(refusal.label().starts_with("r"), "{refusal}");
                    assert!(refusal.to_string().starts_with("rule r"), "{refusal}");
                }
                Err(NormalizeError::Invalid(_)) => {}
            }
        }
    }
});
