//! `resolve`: the input split at its first `\n` into a base and a reference.
//! When both parse:
//! - a base without a scheme is an error (`RelativeBase`);
//! - otherwise `resolve_into` (strict) writes a target that re-parses, whose
//!   scheme is the reference's (when it has one) or the base's, and whose
//!   fragment is the reference's;
//! - the target equals an independent string transcription of §5.2.2–§5.2.4
//!   (plus urinorm's documented `/.//` fix for a path that would read as an
//!   authority);
//! - no complete `.` or `..` segment is left in the target's path (apart
//!   from that `/.` prefix), and resolving the target again against the same
//!   base gives the target (it is absolute, and dot removal is idempotent) —
//!   except where §5.2.2 copies the base's path as it is (a reference with no
//!   scheme, no authority and an empty path: `c:..` + `` = `c:..`): there the
//!   path is the base's, and a second resolution is a fixed point;
//! - `resolve(&str, &str)` agrees; the non-strict rule gives a target that
//!   re-parses, equal to the strict one when the schemes differ.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urinorm::UriRef;
use urinorm::resolve::{SchemeRule, resolve, resolve_into};

/// §5.2.4 over owned strings.
fn naive_remove_dot_segments(path: &str) -> String {
    let mut input = path.to_string();
    let mut output = String::new();
    while !input.is_empty() {
        if let Some(rest) = input.strip_prefix("../").or(input.strip_prefix("./")) {
            input = rest.to_string();
        } else if input.starts_with("/./") || input == "/." {
            input = format!("/{}", &input[input.len().min(3)..]);
        } else if input.starts_with("/../") || input == "/.." {
            input = format!("/{}", &input[input.len().min(4)..]);
            output.truncate(output.rfind('/').unwrap_or(0));
        } else if input == "." || input == ".." {
            input.clear();
        } else {
            let from = usize::from(input.starts_with('/'));
            let end = input[from..].find('/').map_or(input.len(), |n| from + n);
            output.push_str(&input[..end]);
            input = input[end..].to_string();
        }
    }
    output
}

/// §5.2.2 (strict) and §5.3, over strings.
fn naive_resolve(base: &UriRef<'_>, r: &UriRef<'_>) -> String {
    let (scheme, authority, path, query);
    if let Some(s) = r.scheme() {
        scheme = s;
        authority = r.authority();
        path = naive_remove_dot_segments(r.path());
        query = r.query();
    } else {
        scheme = base.scheme().unwrap();
        if r.authority().is_some() {
            authority = r.authority();
            path = naive_remove_dot_segments(r.path());
            query = r.query();
        } else {
            authority = base.authority();
            if r.path().is_empty() {
                path = base.path().to_string();
                query = r.query().or(base.query());
            } else {
                if r.path().starts_with('/') {
                    path = naive_remove_dot_segments(r.path());
                } else {
                    // §5.2.3 merge
                    let merged = if base.authority().is_some() && base.path().is_empty() {
                        format!("/{}", r.path())
                    } else {
                        match base.path().rfind('/') {
                            Some(i) => format!("{}{}", &base.path()[..=i], r.path()),
                            None => r.path().to_string(),
                        }
                    };
                    path = naive_remove_dot_segments(&merged);
                }
                query = r.query();
            }
        }
    }
    let mut t = format!("{scheme}:");
    if let Some(a) = authority {
        t.push_str("//");
        t.push_str(a);
    }
    if authority.is_none() && path.starts_with("//") {
        t.push_str("/.");
    }
    t.push_str(&path);
    if let Some(q) = query {
        t.push('?');
        t.push_str(q);
    }
    if let Some(f) = r.fragment() {
        t.push('#');
        t.push_str(f);
    }
    t
}

fn show(b: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(b))
}

fuzz_target!(|data: &[u8]| {
    let Some(nl) = data.iter().position(|&b| b == b'\n') else {
        return;
    };
    let (base_bytes, ref_bytes) = (&data[..nl], &data[nl + 1..]);
    let (Ok(base), Ok(reference)) = (
        UriRef::parse_bytes(base_bytes),
        UriRef::parse_bytes(ref_bytes),
    ) else {
        return;
    };
    let mut out = Vec::new();
    let result = resolve_into(&base, &reference, SchemeRule::Strict, &mut out);
    let Some(base_scheme) = base.scheme() else {
        let e = result.expect_err("a base without a scheme is accepted");
        assert_eq!(e.kind(), urinorm::ErrorKind::RelativeBase);
        return;
    };
    result.unwrap_or_else(|e| panic!("resolve_into failed: {e}"));
    let context = || {
        format!(
            "base {} reference {} -> {}",
            show(base_bytes),
            show(ref_bytes),
            show(&out)
        )
    };

    let target = UriRef::parse_bytes(&out)
        .unwrap_or_else(|e| panic!("the target does not re-parse ({e}): {}", context()));
    assert_eq!(
        target.scheme(),
        Some(reference.scheme().unwrap_or(base_scheme)),
        "scheme: {}",
        context()
    );
    assert_eq!(
        target.fragment(),
        reference.fragment(),
        "fragment: {}",
        context()
    );

    // Against the transcription of the RFC.
    let expected = naive_resolve(&base, &reference);
    assert_eq!(
        show(&out),
        show(expected.as_bytes()),
        "vs §5.2 transcription: {}",
        context()
    );

    // §5.2.2: a reference with no scheme, no authority and an empty path
    // takes the base's path as it is, dot segments and all (`c:..` against
    // an empty reference is `c:..`). Every other target's path went through
    // remove_dot_segments.
    let inherits_base_path = reference.scheme().is_none()
        && reference.authority().is_none()
        && reference.path().is_empty();
    if inherits_base_path {
        assert_eq!(target.path(), base.path(), "inherited path: {}", context());
    } else {
        // No dot segments left (apart from the `/.` that keeps `//` a path).
        let path = target.path();
        let path = if target.authority().is_none() && path.starts_with("/.//") {
            &path[2..]
        } else {
            path
        };
        assert!(
            !path.split('/').any(|s| s == "." || s == ".."),
            "dot segment left: {}",
            context()
        );
    }

    // Resolving the target again gives the target; for an inherited path,
    // the second resolution removes its dot segments, and a third changes
    // nothing.
    let mut again = Vec::new();
    resolve_into(&base, &target, SchemeRule::Strict, &mut again).unwrap();
    if inherits_base_path {
        let twice = UriRef::parse_bytes(&again)
            .unwrap_or_else(|e| panic!("{} does not re-parse ({e}): {}", show(&again), context()));
        let mut thrice = Vec::new();
        resolve_into(&base, &twice, SchemeRule::Strict, &mut thrice).unwrap();
        assert_eq!(show(&thrice), show(&again), "not idempotent: {}", context());
    } else {
        assert_eq!(show(&again), show(&out), "not idempotent: {}", context());
    }

    // The &str API agrees.
    let (bs, rs) = (
        std::str::from_utf8(base_bytes).unwrap(),
        std::str::from_utf8(ref_bytes).unwrap(),
    );
    assert_eq!(resolve(bs, rs).unwrap().as_bytes(), &out[..]);

    // Non-strict.
    let mut loose = Vec::new();
    resolve_into(&base, &reference, SchemeRule::NonStrict, &mut loose).unwrap();
    let reparsed = UriRef::parse_bytes(&loose);
    assert!(
        reparsed.is_ok(),
        "non-strict target {} does not re-parse",
        show(&loose)
    );
    if !reference
        .scheme()
        .is_some_and(|s| s.eq_ignore_ascii_case(base_scheme))
    {
        assert_eq!(
            show(&loose),
            show(&out),
            "non-strict differs: {}",
            context()
        );
    }
});
