//! Failures found by the fuzz targets in `fuzz/` (see fuzz/README.md), each
//! on the exact bytes the fuzzer minimized (`cargo fuzz tmin`), through the
//! public API. Each test names its target and the invariant that failed.

use urinorm::UriRef;
use urinorm::normalize::protocol::{PRESETS, Protocol};
use urinorm::normalize::{Normalizer, Rung, Scratch};

/// Target `normalize`, invariant "`normalize_if_changed` returns `false`
/// exactly when the output equals the input". On `o:/.//` the syntax and
/// scheme rungs write the input unchanged (dot removal gives `//`, and the
/// `/.` that keeps a path without an authority from reading as one puts
/// back what was removed), but both rules are recorded as changes, so
/// `normalize_if_changed` returned `true` and appended the input's bytes.
#[test]
fn normalize_if_changed_on_a_path_that_keeps_its_leading_dot() {
    let input: &[u8] = b"o:/.//";
    for rung in [Rung::Syntax, Rung::Scheme] {
        let n = Normalizer::new(rung);
        let mut out = Vec::new();
        n.normalize_into(input, &mut out, &mut Scratch::default())
            .unwrap();
        assert_eq!(out, input, "{rung}: normalize_into");
        let mut out = Vec::new();
        let changed = n
            .normalize_if_changed(input, &mut out, &mut Scratch::default())
            .unwrap();
        assert!(
            !changed && out.is_empty(),
            "{rung}: normalize_if_changed returned {changed} and appended {:?}, \
             but the canonical form is the input",
            String::from_utf8_lossy(&out)
        );
    }
}

/// Target `normalize`, invariant "normalizing the output again gives the
/// same output" at the protocol rung (`safe`, the default, and every preset).
/// `host-trailing-dot` removed one trailing dot only, after `ipv4-numeric`
/// had run: `http://9..` gave `http://9./`, which gives `http://0.0.0.9/`;
/// `http://a..` gave `http://a./`, which gives `http://a/`.
#[test]
fn protocol_rung_is_idempotent_on_hosts_with_two_trailing_dots() {
    let mut normalizers = vec![("default", Normalizer::new(Rung::Protocol))];
    normalizers.extend(
        PRESETS
            .iter()
            .map(|p| (p.name, Normalizer::with_protocol(Protocol::from(*p)))),
    );
    for input in ["http://9..", "http://a.."] {
        for (name, n) in &normalizers {
            let once = n.normalize(input).unwrap();
            assert!(UriRef::parse(&once).is_ok());
            let twice = n.normalize(&once).unwrap();
            assert_eq!(twice, once, "{name}: {input:?} -> {once:?} -> {twice:?}");
        }
    }
}

/// Target `normalize`, invariant "normalizing the output again gives the
/// same output" at the protocol rung with the `aggressive` preset (found with
/// decode-safe, drop-empty-params and lowercase-path added; the preset alone
/// fails too). The scheme rung writes the path of `http:/././/.` (and of
/// `http:/.//`) as `/.//` so that it cannot read as an authority; then
/// `trailing-slash=remove` strips the slashes down to `/.`, a dot segment:
/// `https:/.`, which the next pass turns into `https:/`.
#[test]
fn aggressive_protocol_rung_is_idempotent_on_a_dot_guarded_path() {
    let aggressive = PRESETS.iter().find(|p| p.name == "aggressive").unwrap();
    let n = Normalizer::with_protocol(Protocol::from(*aggressive));
    for input in ["http:/././/.", "http:/.//"] {
        let once = n.normalize(input).unwrap();
        let twice = n.normalize(&once).unwrap();
        assert_eq!(twice, once, "{input:?} -> {once:?} -> {twice:?}");
    }
}

/// Target `normalize`, invariant "normalizing the output again gives the
/// same output" at the protocol rung with `aggressive` plus `decode-safe`
/// (minimized by `cargo fuzz tmin`). `sort-query` sorts the parameters by
/// their bytes before `decode-safe` decodes them: `%3AZt` sorts before `'`
/// (`%` < `'`), then becomes `:Zt`, which sorts after it, so the second
/// pass reorders: `httP://?%3aZt&'` -> `https:///?:Zt&'` -> `https:///?'&:Zt`.
#[test]
fn sort_query_and_decode_safe_are_idempotent_together() {
    let aggressive = PRESETS.iter().find(|p| p.name == "aggressive").unwrap();
    let mut protocol = Protocol::from(*aggressive);
    protocol.add(urinorm::normalize::protocol::Transform::DecodeSafe);
    let n = Normalizer::with_protocol(protocol);
    let input: &[u8] = b"httP://?%3aZt&'";
    let mut once = Vec::new();
    n.normalize_into(input, &mut once, &mut Scratch::default())
        .unwrap();
    let mut twice = Vec::new();
    n.normalize_into(&once, &mut twice, &mut Scratch::default())
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&twice),
        String::from_utf8_lossy(&once),
        "{:?} -> {:?} -> {:?}",
        String::from_utf8_lossy(input),
        String::from_utf8_lossy(&once),
        String::from_utf8_lossy(&twice)
    );
}

/// Target `normalize`, invariant "normalizing the output again gives the
/// same output" at the protocol rung with the `aggressive` preset (found with
/// decode-safe, drop-empty-params and lowercase-path added; the preset alone
/// fails too). `ipv4-numeric` runs before `strip-www`, so a host that is a
/// numeric IPv4 address only once `www.` is gone is rewritten by the second
/// pass: `http://www.06.0200/` -> `https://06.0200/` -> `https://6.0.0.128/`,
/// and, as minimized, `http://www.0.0` -> `https://0.0/` -> `https://0.0.0.0/`.
#[test]
fn strip_www_then_ipv4_numeric_is_idempotent() {
    let aggressive = PRESETS.iter().find(|p| p.name == "aggressive").unwrap();
    let n = Normalizer::with_protocol(Protocol::from(*aggressive));
    for input in ["http://www.0.0", "http://www.06.0200/"] {
        let once = n.normalize(input).unwrap();
        let twice = n.normalize(&once).unwrap();
        assert_eq!(twice, once, "{input:?} -> {once:?} -> {twice:?}");
    }
}

/// Target `normalize`, invariant "normalizing the output again gives the
/// same output" at the protocol rung with the `aggressive` preset (found with
/// decode-safe, drop-empty-params and lowercase-path added; the preset alone
/// fails too). `strip-www` drops one leading `www.` when two labels remain,
/// and what remains can start with `www.` again, which the second pass
/// drops: `https://www.www.e.p` -> `https://www.e.p/` -> `https://e.p/`
/// (found as `https://www.www.ule.php?profession=Accountants`).
#[test]
fn strip_www_is_idempotent_on_a_doubled_www_label() {
    let aggressive = PRESETS.iter().find(|p| p.name == "aggressive").unwrap();
    let n = Normalizer::with_protocol(Protocol::from(*aggressive));
    for input in [
        "https://www.www.e.p",
        "https://www.www.ule.php?profession=Accountants",
    ] {
        let once = n.normalize(input).unwrap();
        let twice = n.normalize(&once).unwrap();
        assert_eq!(twice, once, "{input:?} -> {once:?} -> {twice:?}");
    }
}
