//! Who may hold a connection. A connection is *unproven* until one of its
//! requests has passed the token check (any request, when the service has
//! no token): unproven connections are closed when they send no request
//! within a few seconds, and past a bound the oldest of them is closed to
//! let a new one in. Only proven connections hold one of the
//! `--max-connections` slots, so sockets that send nothing, or send no
//! token, cannot keep an authorized client out.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The connections of a service.
pub struct Gate {
    slots: Arc<Semaphore>,
    /// The unproven connections, oldest first: each one's closing signal.
    unproven: Mutex<BTreeMap<u64, Arc<Notify>>>,
    max_unproven: usize,
    next: AtomicU64,
}

/// One connection's standing.
pub struct Pass {
    id: u64,
    gate: Arc<Gate>,
    requested: AtomicBool,
    slot: tokio::sync::Mutex<Option<OwnedSemaphorePermit>>,
    pushed_out: Arc<Notify>,
}

impl Gate {
    /// At most `slots` proven connections, and `max_unproven` others.
    pub fn new(slots: usize, max_unproven: usize) -> Arc<Gate> {
        Arc::new(Gate {
            slots: Arc::new(Semaphore::new(slots)),
            unproven: Mutex::new(BTreeMap::new()),
            max_unproven: max_unproven.max(1),
            next: AtomicU64::new(0),
        })
    }

    /// A new connection, unproven. The oldest unproven connection past
    /// the bound is told to close ([`Pass::pushed_out`]).
    pub fn admit(self: &Arc<Gate>) -> Arc<Pass> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let pushed_out = Arc::new(Notify::new());
        let mut unproven = self.unproven.lock().unwrap_or_else(|p| p.into_inner());
        while unproven.len() >= self.max_unproven {
            match unproven.pop_first() {
                // Kept until its connection waits for it.
                Some((_, oldest)) => oldest.notify_one(),
                None => break,
            }
        }
        unproven.insert(id, Arc::clone(&pushed_out));
        Arc::new(Pass {
            id,
            gate: Arc::clone(self),
            requested: AtomicBool::new(false),
            slot: tokio::sync::Mutex::new(None),
            pushed_out,
        })
    }

    fn forget(&self, id: u64) {
        let mut unproven = self.unproven.lock().unwrap_or_else(|p| p.into_inner());
        unproven.remove(&id);
    }
}

impl Pass {
    /// Notes that a request came.
    pub fn requested(&self) {
        self.requested.store(true, Ordering::Relaxed);
    }

    /// Whether a request came.
    pub fn has_requested(&self) -> bool {
        self.requested.load(Ordering::Relaxed)
    }

    /// Ends when newer connections push this one out (never once proven).
    pub async fn pushed_out(&self) {
        self.pushed_out.notified().await;
    }

    /// Makes the connection proven (a request passed the token check):
    /// it takes a slot, waiting for one while all are held, and can no
    /// longer be pushed out.
    pub async fn prove(&self) {
        let mut slot = self.slot.lock().await;
        if slot.is_none() {
            let permit = Arc::clone(&self.gate.slots).acquire_owned().await;
            *slot = Some(permit.expect("never closed"));
            self.gate.forget(self.id);
        }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.gate.forget(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    #[tokio::test]
    async fn the_oldest_unproven_is_pushed_out_and_a_proven_one_never() {
        let pushed_out = |pass: &Pass| {
            let waiting = pass.pushed_out();
            tokio::pin!(waiting);
            let waker = std::task::Waker::noop();
            let mut cx = std::task::Context::from_waker(waker);
            waiting.as_mut().poll(&mut cx).is_ready()
        };
        let gate = Gate::new(1, 2);
        let first = gate.admit();
        first.prove().await;
        let second = gate.admit();
        let third = gate.admit();
        let _fourth = gate.admit();
        // Two unproven at most: the second went for the fourth.
        assert!(pushed_out(&second));
        assert!(!pushed_out(&third));
        let _sixth = gate.admit();
        // The first is proven: never told to close.
        assert!(!pushed_out(&first));
        // Its slot is the only one: another proof waits for it to go.
        let fifth = gate.admit();
        let waiting = tokio::spawn(async move { fifth.prove().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        drop(first);
        waiting.await.unwrap();
    }
}
