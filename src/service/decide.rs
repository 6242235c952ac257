//! The decision that gives one `new` a key across every request: a key
//! is held if the store or the pending sets hold it, else admitted once,
//! the store read again when a commit ended meanwhile. It knows the store
//! and the pending sets; not lines, bodies or the committer's work.

use std::sync::MutexGuard;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Pending, Refused, Shared};
use crate::pipeline::Fate;
use crate::store::{Holding, StoreError};

/// The fate of each distinct key of a body, as the store and the pending
/// sets decide it (or a forget did).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Decision {
    New,
    Held,
    Expired,
    Forgotten,
    Absent,
    /// Decided in an earlier part of the body.
    Repeat,
    /// New (or expired), past its site's budget: not admitted.
    Capped,
}

impl Decision {
    /// The fate of a line of this key, its first in the part or not.
    /// `First` stands for forgotten and `Held` for absent in a forget.
    pub(super) fn fate(self, first: bool) -> Fate {
        match (self, first) {
            (Decision::Held, _) => Fate::Seen,
            (Decision::Capped, true) => Fate::Capped,
            (Decision::Repeat, _) | (_, false) => Fate::Duplicate,
            (Decision::New | Decision::Forgotten, true) => Fate::First,
            (Decision::Expired, true) => Fate::Expired,
            (Decision::Absent, true) => Fate::Seen,
        }
    }

    /// Whether a later part's line of this key is a `dup` of this one (a
    /// held key's is `seen` again, judged afresh).
    pub(super) fn is_remembered(self) -> bool {
        !matches!(self, Decision::Held | Decision::Repeat | Decision::Capped)
    }
}

impl Shared {
    /// Reads what the store says of `prints`, noting damage.
    fn holds(&self, prints: &[u128]) -> Result<Vec<Holding>, StoreError> {
        // The store's guard goes before the damage is noted.
        let holdings = self.store().holds(prints);
        holdings.map_err(|e| self.note_damage(e))
    }

    /// Decides each of `firsts` (distinct): held by the store or pending,
    /// expired, or new; with `admit`, admits the new and expired ones,
    /// under a budget those their site (`sites`, one each: its print and
    /// name) has room for, the others capped.
    pub(super) fn decide(
        &self,
        firsts: &[u128],
        sites: &[(u64, Vec<u8>)],
        admit: bool,
    ) -> Result<Vec<Decision>, Refused> {
        // The store is read without the pending lock, so requests read it
        // together. A commit that ends meanwhile takes its keys out of the
        // pending sets: then the store is asked again, under the lock,
        // where no commit can end.
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut holdings = self.holds(firsts)?;
        let mut pending = self.room_to_admit(admit)?;
        if self.epoch.load(Ordering::Acquire) != epoch {
            holdings = self.holds(firsts)?;
        }
        let pending = &mut *pending;
        let decisions = firsts
            .iter()
            .zip(holdings)
            .enumerate()
            .map(|(k, (&print, holding))| {
                let decision = match holding {
                    _ if pending.holds(print) => return Decision::Held,
                    Holding::Held => return Decision::Held,
                    Holding::Expired => Decision::Expired,
                    Holding::Absent => Decision::New,
                };
                if let (true, Some(budget), Some((site, name))) =
                    (admit, &mut pending.budget, sites.get(k))
                    && !budget.spend(print, *site, name)
                {
                    return Decision::Capped;
                }
                if admit {
                    pending.admitted.insert(print);
                    pending.renewed += u64::from(decision == Decision::Expired);
                }
                decision
            })
            .collect();
        if pending.admitted.len() >= self.settings.pending_keys {
            self.wake.notify_all();
        }
        Ok(decisions)
    }

    /// The pending sets, once there is room for more keys. Past
    /// [`Shared::full_at`] keys pending, an add waits for a commit to end
    /// (clients faster than the committer are held back, rather than
    /// memory growing), or while commits fail, is refused.
    fn room_to_admit(&self, admit: bool) -> Result<MutexGuard<'_, Pending>, Refused> {
        let mut pending = self.pending();
        loop {
            if pending.closed {
                return Err(Refused::Stopping);
            }
            if let (true, Some(why)) = (admit, &pending.damaged) {
                return Err(Refused::Damaged(why.clone()));
            }
            let full = admit && pending.admitted.len() + pending.committing.len() >= self.full_at();
            match (&pending.failing, full) {
                (_, false) => return Ok(pending),
                (Some(why), true) => return Err(Refused::Full(why.clone())),
                (None, true) => {}
            }
            // Timed, to see a failure or a close as well.
            let wait = Duration::from_millis(50);
            pending = match self.settled.wait_timeout(pending, wait) {
                Ok((pending, _)) => pending,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Past this many keys pending, nothing more is admitted until a
    /// commit ends.
    fn full_at(&self) -> usize {
        self.settings.pending_keys.saturating_mul(2)
    }
}
