//! `serve_body`: request bodies for the seen service's core
//! (`urinorm::service::Service`, what `urinorm serve` answers `/v1/add` and
//! `/v1/check` with), one service for the whole campaign, committing every
//! few milliseconds beside the requests. The first byte of the input says
//! whether it is added or checked (bit 0), how the body is sent (bits 1-2:
//! plain, gzip, zstd) and in what pieces (bits 3-7: their size); the rest is
//! the body. It is encoded so, fed in those pieces to a `BodyParts` of small
//! windows (as `urinorm serve` reads a chunked body), and each part answered
//! by `Service::answer_part`; a fifth of the inputs are also fed as they are
//! to a gzip and a zstd reader (mostly not valid: an error, never a panic).
//! Invariants:
//! - no panic, whatever the bytes;
//! - what was encoded decodes, and the parts join to the body (a line
//!   longer than the limit cut one byte past it);
//! - one verdict line for each line of the body, each a verdict's word,
//!   with a tab and a key after `new`, `dup`, `seen`, `rejected`;
//! - a key is answered `new` by an add once in the whole campaign, and
//!   `seen` only after it was (commits in between or not).
#![no_main]

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use urinorm::line::key::KeyFormat;
use urinorm::line::{Columns, NormalizeLines};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::store::{Access, Config, Store};
use std::io::Write;
use urinorm::service::{Asking, Body, BodyParts, Encoding, Service, Settings, VERDICTS};

struct Campaign {
    service: Service,
    /// Keys answered `new` by an add so far.
    admitted: Mutex<HashSet<Vec<u8>>>,
    _dir: tempfile::TempDir,
}

fn campaign() -> &'static Campaign {
    static CAMPAIGN: OnceLock<Campaign> = OnceLock::new();
    CAMPAIGN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let lines = NormalizeLines::new(
            Normalizer::new(Rung::Scheme),
            KeyFormat::Canonical,
            Columns::default(),
        );
        let config = Config::new(lines.key_settings());
        let store = Store::open(dir.path(), &config, Access::Write { wait: false }).unwrap();
        let settings = Settings {
            commit_every: Duration::from_millis(5),
            max_line_bytes: 512,
            ..Settings::default()
        };
        Campaign {
            service: Service::start(store, lines, settings).unwrap(),
            admitted: Mutex::new(HashSet::new()),
            _dir: dir,
        }
    })
}

/// How many lines `body` holds as the engine reads it: a leading BOM is
/// ignored (a body of a BOM alone has no line), each line feed ends one,
/// and bytes after the last one are a line.
fn lines_in(body: &[u8]) -> usize {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let feeds = body.iter().filter(|&&b| b == b'\n').count();
    feeds + usize::from(!body.is_empty() && body.last() != Some(&b'\n'))
}

/// `body` as `encoding` encodes it.
fn encoded(body: &[u8], encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Identity => body.to_vec(),
        Encoding::Gzip => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(body).unwrap();
            gz.finish().unwrap()
        }
        Encoding::Zstd => zstd::encode_all(body, 1).unwrap(),
    }
}

/// `body` with every line longer than `max` bytes cut to `max + 1`, as
/// `BodyParts` keeps it.
fn cut_lines(body: &[u8], max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(&line[..line.len().min(max + 1)]);
    }
    out
}

const MAX_LINE: usize = 512;

fuzz_target!(|data: &[u8]| {
    let Some((&how, body)) = data.split_first() else {
        return;
    };
    let admit = how & 1 == 1;
    let encoding = match (how >> 1) & 3 {
        1 => Encoding::Gzip,
        2 => Encoding::Zstd,
        _ => Encoding::Identity,
    };
    let piece = 1 + usize::from(how >> 3) * 29;
    if how % 5 == 0 {
        for wrong in [Encoding::Gzip, Encoding::Zstd] {
            let mut parts = BodyParts::new(wrong, 64, MAX_LINE, u64::MAX);
            let _ = parts.feed(body).and_then(|()| parts.finish().map(drop));
        }
    }
    let campaign = campaign();
    let asking = match admit {
        true => Asking::Add,
        false => Asking::Check,
    };
    let mut parts = BodyParts::new(encoding, 64, MAX_LINE, u64::MAX);
    let mut state = Body::default();
    let mut answer = urinorm::service::Answer::default();
    let mut joined = Vec::new();
    let mut answer_part = |part: Vec<u8>, answer: &mut urinorm::service::Answer| {
        let answered = campaign
            .service
            .answer_part(&part, asking, &mut state)
            .expect("a running service answers");
        answer.body.extend_from_slice(&answered.body);
        for (sum, n) in answer.counts.iter_mut().zip(answered.counts) {
            *sum += n;
        }
        joined.extend_from_slice(&part);
    };
    for bytes in encoded(body, encoding).chunks(piece) {
        parts.feed(bytes).expect("what was encoded decodes");
        while let Some(part) = parts.next_part() {
            answer_part(part, &mut answer);
        }
    }
    if let Some(part) = parts.finish().expect("what was encoded ends") {
        answer_part(part, &mut answer);
    }
    assert_eq!(joined, cut_lines(body, MAX_LINE), "the parts join to the body");
    assert_eq!(answer.body.last().copied().unwrap_or(b'\n'), b'\n');
    let verdicts: Vec<&[u8]> = answer.body.split(|&b| b == b'\n').collect();
    let verdicts = &verdicts[..verdicts.len() - 1];
    assert_eq!(verdicts.len(), lines_in(body), "one verdict a line");
    assert_eq!(answer.counts.iter().sum::<u64>() as usize, verdicts.len());
    let mut admitted = campaign.admitted.lock().unwrap();
    for verdict in verdicts {
        let (word, key) = match verdict.iter().position(|&b| b == b'\t') {
            Some(tab) => (&verdict[..tab], Some(&verdict[tab + 1..])),
            None => (&verdict[..], None),
        };
        let word = std::str::from_utf8(word).expect("a verdict's word");
        assert!(VERDICTS.contains(&word), "{word}");
        assert_eq!(
            key.is_some(),
            matches!(word, "new" | "dup" | "seen" | "rejected" | "expired")
        );
        let key = key.unwrap_or_default();
        match word {
            "new" if admit => assert!(admitted.insert(key.to_vec()), "a key new twice"),
            "new" => assert!(!admitted.contains(key), "an admitted key checked as new"),
            "seen" => assert!(admitted.contains(key), "a key seen before it was admitted"),
            _ => {}
        }
    }
});
