//! The scrubber: the whole store read now and then, at a bounded rate,
//! every block's checksum checked, so that damage is found without a
//! request reading it. It knows the store's files through a snapshot of
//! its own; not the pending keys or the committer.

use std::time::{Duration, Instant, SystemTime};

use super::{Event, Shared};
use crate::store::{Access, Store};

impl Shared {
    /// The scrubber: every `every`, reads the whole store (a snapshot of
    /// its own) at the settings' rate, until closed.
    pub(super) fn scrub_loop(&self, every: Duration) {
        loop {
            {
                let pending = self.pending();
                let (pending, _) = self
                    .scrub_wake
                    .wait_timeout_while(pending, every, |p| !p.closed)
                    .unwrap_or_else(|p| p.into_inner());
                if pending.closed {
                    return;
                }
                if pending.damaged.is_some() {
                    continue;
                }
            }
            let started = Instant::now();
            let mut bytes = 0u64;
            let rate = self.settings.scrub_bytes_per_second.max(1);
            let mut pace = |read: u64| {
                bytes += read;
                let due = Duration::from_secs_f64(bytes as f64 / rate as f64);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(wait);
                }
                !self.pending().closed
            };
            let scrubbed = Store::open_existing(&self.dir, Access::ReadOnly)
                .and_then(|snapshot| snapshot.scrub(&mut pace));
            match scrubbed {
                Ok(true) => {
                    let mut pending = self.pending();
                    pending.scrubs += 1;
                    pending.last_scrub = Some(SystemTime::now());
                    drop(pending);
                    if let Some(observer) = &self.observer {
                        let took = started.elapsed();
                        observer(&Event::Scrubbed { bytes, took });
                    }
                }
                Ok(false) => return,
                Err(e) => drop(self.note_damage(e)),
            }
        }
    }
}
