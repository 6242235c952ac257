//! Property tests: references generated from the Appendix A grammar parse into
//! the parts they were built from, recompose to the same bytes (§5.3), and
//! split the way the Appendix B regular expression splits them.

use crate::common::grammar::reference;
use proptest::prelude::*;
use regex::Regex;
use urinorm::UriRef;

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// The quick split of a valid reference finds the scheme and host the
    /// full parse finds.
    #[test]
    fn scheme_and_host_split_as_the_parser_splits(parts in reference()) {
        let text = parts.compose();
        let uri = UriRef::parse(&text).unwrap();
        let quick = urinorm::uri::SchemeHost::of_valid(text.as_bytes());
        prop_assert_eq!(quick.scheme, uri.scheme().map(str::as_bytes), "{}", text);
        prop_assert_eq!(quick.host, uri.host().map(str::as_bytes), "{}", text);
        let registered = uri.host_kind() == Some(urinorm::HostKind::RegName);
        prop_assert_eq!(quick.registered_name, registered, "{}", text);
        prop_assert_eq!(quick, urinorm::uri::SchemeHost::from(&uri), "{}", text);
    }
}
