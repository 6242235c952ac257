//! `serve_body`: request bodies for the seen service's core
//! (`urinorm::serve::Service`, what `urinorm serve` answers `/v1/add` and
//! `/v1/check` with), one service for the whole campaign, committing every
//! few milliseconds beside the requests. The first byte of the input says
//! whether it is added or checked; the rest is the body. Invariants:
//! - no panic, whatever the bytes;
//! - one verdict line for each line of the body, each a verdict's word,
//!   with a tab and a key after `new`, `dup`, `seen`, `rejected`;
//! - a key is answered `new` by an add once in the whole campaign, and
//!   `seen` only after it was (commits in between or not).
#![no_main]

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use urinorm::key::KeyFormat;
use urinorm::mapper::{Columns, NormalizeLines};
use urinorm::normalize::{Normalizer, Rung};
use urinorm::seen::{Access, Config, Store};
use urinorm::serve::{Service, Settings, VERDICTS};

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

fuzz_target!(|data: &[u8]| {
    let Some((&how, body)) = data.split_first() else {
        return;
    };
    let admit = how & 1 == 1;
    let campaign = campaign();
    let answer = campaign
        .service
        .answer(body, admit)
        .expect("a running service answers");
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
