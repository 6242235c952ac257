//! `normalize`: arbitrary bytes through every rung of `Rung::ALL`
//! (`Normalizer::new`) and through `Normalizer::with_protocol` for each preset
//! of `protocol::PRESETS` with `decode-safe`, `drop-empty-params` and
//! `lowercase-path` added. For each normalizer that accepts the input:
//! - the output is ASCII and re-parses as a URI reference;
//! - normalizing the output again gives the output (idempotence);
//! - `normalize_into` appends (a prefix already in `out` is kept) and leaves
//!   `out` as it was on error;
//! - `normalize_if_changed` agrees: `false` with `out` untouched exactly when
//!   the output equals the input, else `true` with the same bytes appended;
//! - `normalize(&str)` agrees for UTF-8 input.
//!
//! Across rungs:
//! - acceptance only shrinks going up: a rung never accepts what a lower
//!   rung rejects;
//! - monotonicity: for consecutive rungs k < k+1 (and scheme → each protocol
//!   variant) that both accept the input, the rung-k output normalized at
//!   rung k+1 equals the rung-(k+1) output of the input;
//! - `protocol::candidates` is conservative: each transform it leaves out of
//!   the scheme rung's output leaves that output unchanged on its own.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use urinorm::UriRef;
use urinorm::normalize::protocol::{PRESETS, Protocol, Transform, candidates};
use urinorm::normalize::{Normalizer, Rung, Scratch};

/// `Rung::ALL` in order (the protocol rung with its default, `safe`), then
/// one protocol normalizer per preset with the extra transforms.
fn normalizers() -> &'static [(String, Normalizer)] {
    static N: OnceLock<Vec<(String, Normalizer)>> = OnceLock::new();
    N.get_or_init(|| {
        let mut v: Vec<_> = Rung::ALL
            .into_iter()
            .map(|r| (r.name().to_string(), Normalizer::new(r)))
            .collect();
        for preset in PRESETS {
            let mut p = Protocol::from(*preset);
            p.add(Transform::DecodeSafe);
            p.add(Transform::DropEmptyParams);
            p.add(Transform::LowercasePath);
            v.push((
                format!(
                    "protocol/{}+decode-safe+drop-empty-params+lowercase-path",
                    preset.name
                ),
                Normalizer::with_protocol(p),
            ));
        }
        v
    })
}

/// Each transform alone.
fn singles() -> &'static [(Transform, Normalizer)] {
    static N: OnceLock<Vec<(Transform, Normalizer)>> = OnceLock::new();
    N.get_or_init(|| {
        Transform::ALL
            .into_iter()
            .map(|t| {
                let mut p = Protocol::none();
                p.add(t);
                (t, Normalizer::with_protocol(p))
            })
            .collect()
    })
}

const PREFIX: &[u8] = b"prefix\n";

/// Checks one normalizer on `input`; returns its output when it accepts.
fn check(name: &str, n: &Normalizer, input: &[u8]) -> Option<Vec<u8>> {
    let mut out = PREFIX.to_vec();
    let result = n.normalize_into(input, &mut out, &mut Scratch::default());
    let mut changed_buf = PREFIX.to_vec();
    let changed = n.normalize_if_changed(input, &mut changed_buf, &mut Scratch::default());
    if let Ok(text) = std::str::from_utf8(input) {
        let s = n.normalize(text);
        assert_eq!(
            s.is_ok(),
            result.is_ok(),
            "{name}: normalize vs normalize_into"
        );
        if let Ok(s) = s {
            assert_eq!(
                s.as_bytes(),
                &out[PREFIX.len()..],
                "{name}: normalize vs normalize_into"
            );
        }
    }
    if let Err(e) = result {
        assert_eq!(out, PREFIX, "{name}: out changed on error {e}");
        assert_eq!(
            changed.map(|_| ()),
            Err(e),
            "{name}: normalize_if_changed vs normalize_into"
        );
        assert_eq!(
            changed_buf, PREFIX,
            "{name}: normalize_if_changed changed out on error"
        );
        return None;
    }
    assert!(
        out.starts_with(PREFIX),
        "{name}: the prefix in out was overwritten"
    );
    let output = out.split_off(PREFIX.len());
    assert!(output.is_ascii(), "{name}: non-ASCII output {output:?}");

    // normalize_if_changed agrees.
    let changed =
        changed.unwrap_or_else(|e| panic!("{name}: normalize_if_changed: {e}, normalize_into: Ok"));
    if output == input {
        assert!(
            !changed,
            "{name}: normalize_if_changed says changed but the output is the input {:?}",
            String::from_utf8_lossy(input)
        );
        assert_eq!(
            changed_buf, PREFIX,
            "{name}: normalize_if_changed appended with false"
        );
    } else {
        assert!(
            changed,
            "{name}: normalize_if_changed says unchanged but {:?} -> {:?}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&output)
        );
        assert_eq!(&changed_buf[..PREFIX.len()], PREFIX);
        assert_eq!(
            &changed_buf[PREFIX.len()..],
            &output[..],
            "{name}: normalize_if_changed output"
        );
    }

    // The output re-parses.
    if let Err(e) = UriRef::parse_bytes(&output) {
        panic!(
            "{name}: output {:?} of {:?} does not re-parse: {e}",
            String::from_utf8_lossy(&output),
            String::from_utf8_lossy(input)
        );
    }
    // Idempotence.
    let mut again = Vec::new();
    match n.normalize_into(&output, &mut again, &mut Scratch::default()) {
        Ok(_) => assert!(
            again == output,
            "{name}: not idempotent: {:?} -> {:?} -> {:?}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&output),
            String::from_utf8_lossy(&again)
        ),
        Err(e) => panic!(
            "{name}: output {:?} of {:?} is rejected by the same rung: {e}",
            String::from_utf8_lossy(&output),
            String::from_utf8_lossy(input)
        ),
    }
    Some(output)
}

fuzz_target!(|data: &[u8]| {
    let ns = normalizers();
    let outputs: Vec<Option<Vec<u8>>> = ns.iter().map(|(name, n)| check(name, n, data)).collect();

    // Rung::ALL, lowest first: acceptance only shrinks.
    let rungs = Rung::ALL.len();
    for k in 0..rungs - 1 {
        assert!(
            outputs[k].is_some() || outputs[k + 1].is_none(),
            "{} accepts what {} rejects: {:?}",
            ns[k + 1].0,
            ns[k].0,
            String::from_utf8_lossy(data)
        );
    }
    for k in rungs..ns.len() {
        assert_eq!(
            outputs[k].is_some(),
            outputs[rungs - 1].is_some(),
            "{} and the protocol rung disagree on acceptance",
            ns[k].0
        );
    }

    // What `candidates` leaves out of the scheme form does not change it.
    if let Some(form) = &outputs[rungs - 2] {
        let uri = UriRef::parse_bytes(form).expect("checked above: the output re-parses");
        for (t, single) in singles() {
            if candidates(&uri).any(|c| c == *t) {
                continue;
            }
            let mut alone = Vec::new();
            let result = single.normalize_into(form, &mut alone, &mut Scratch::default());
            assert!(
                result.is_ok() && alone == *form,
                "{t} alone changes {:?}, which candidates() rules out",
                String::from_utf8_lossy(form)
            );
        }
    }

    // Monotonicity: consecutive rungs, and scheme -> each protocol variant.
    let mut pairs: Vec<(usize, usize)> = (0..rungs - 1).map(|k| (k, k + 1)).collect();
    pairs.extend((rungs..ns.len()).map(|k| (rungs - 2, k)));
    for (lo, hi) in pairs {
        let (Some(low), Some(high)) = (&outputs[lo], &outputs[hi]) else {
            continue;
        };
        let mut up = Vec::new();
        let result = ns[hi].1.normalize_into(low, &mut up, &mut Scratch::default());
        assert!(
            result.is_ok() && &up == high,
            "monotonicity {} -> {}: input {:?}; {}: {:?}; {} of that: {:?}; {} of the input: {:?}",
            ns[lo].0,
            ns[hi].0,
            String::from_utf8_lossy(data),
            ns[lo].0,
            String::from_utf8_lossy(low),
            ns[hi].0,
            result.map(|_| String::from_utf8_lossy(&up).into_owned()),
            ns[hi].0,
            String::from_utf8_lossy(high)
        );
    }
});
