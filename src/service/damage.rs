//! Damage found: the first a read, a commit or a scrub finds is kept and
//! told, and from then on nothing more is admitted or written. It knows
//! which store errors are damage; not who found it.

use super::{Event, Pending, Refused, Shared};
use crate::store::StoreError;

impl Shared {
    /// Notes the damage `e` says, when it is damage (the first found is
    /// kept and told): the service writes nothing more. Returns `e`.
    pub(super) fn note_damage(&self, e: StoreError) -> StoreError {
        let mut pending = self.pending();
        self.note_damage_locked(&mut pending, &e);
        e
    }

    /// [`Shared::note_damage`], the pending lock held.
    pub(super) fn note_damage_locked(&self, pending: &mut Pending, e: &StoreError) {
        if !matches!(e, StoreError::Damaged { .. }) || pending.damaged.is_some() {
            return;
        }
        let why = e.to_string();
        pending.damaged = Some(why.clone());
        self.settled.notify_all();
        if let Some(observer) = &self.observer {
            observer(&Event::Damaged(why));
        }
    }

    /// `work`, unless damage was found since the job was asked.
    pub(super) fn unless_damaged<T>(
        &self,
        work: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, Refused> {
        let damaged = self.pending().damaged.clone();
        match damaged {
            Some(why) => Err(Refused::Damaged(why)),
            None => work().map_err(|e| self.refused(e)),
        }
    }

    /// A store's error as a refusal, damage noted.
    fn refused(&self, e: StoreError) -> Refused {
        match self.note_damage(e) {
            StoreError::Damaged { .. } => {
                let why = self.pending().damaged.clone().unwrap_or_default();
                Refused::Damaged(why)
            }
            e => Refused::Store(e),
        }
    }
}
