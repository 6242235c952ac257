//! Scratch space: buffers a thread owns and lends down its calls, so that
//! the work of one line allocates nothing, and no buffer is shared between
//! threads or borrowed twice (no `thread_local!`, no `RefCell`). A worker
//! makes its scratch once and passes it to every call; a call that nests
//! takes a field of its own.
//!
//! This module owns the one open-ended kind, [`Slot`]; each layer's
//! scratch is a struct in that layer.

use std::any::{Any, TypeId};
use std::fmt;

/// Room for one value of a type its user chooses, made on first use: what
/// a layer lends to the code above it, whose buffers it knows nothing of
/// (the engine's worker to a line mapper, the normalizer to site rules).
///
/// ```
/// use urinorm_uri::scratch::Slot;
/// let mut slot = Slot::default();
/// slot.get::<Vec<u8>>().extend_from_slice(b"kept");
/// assert_eq!(slot.get::<Vec<u8>>(), b"kept");
/// ```
#[derive(Default)]
pub struct Slot(Option<(TypeId, Box<dyn Any + Send + Sync>)>);

impl Slot {
    /// The value of type `T` in the slot: the one made before, or a new one
    /// when the slot is empty or holds another type.
    #[inline]
    pub fn get<T: Default + Send + Sync + 'static>(&mut self) -> &mut T {
        // The type is compared as a constant, not asked of the value
        // through its vtable: this runs once a line.
        if !matches!(&self.0, Some((id, _)) if *id == TypeId::of::<T>()) {
            self.0 = Some((TypeId::of::<T>(), Box::new(T::default())));
        }
        let (_, value) = self.0.as_mut().expect("filled above");
        let value: *mut (dyn Any + Send + Sync) = &mut **value;
        // SAFETY: the box was made from a `T` (the id stored beside it is
        // `T`'s, checked above), so the pointer is to a live `T`, borrowed
        // mutably from `self` for the returned lifetime.
        unsafe { &mut *value.cast::<T>() }
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Slot(..)"
        } else {
            "Slot(empty)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_keeps_its_value_and_starts_again_for_another_type() {
        let mut slot = Slot::default();
        slot.get::<Vec<u8>>().push(1);
        slot.get::<Vec<u8>>().push(2);
        assert_eq!(slot.get::<Vec<u8>>(), &[1, 2]);
        // Same size and alignment, another type: a fresh value, not a reinterpretation.
        *slot.get::<Vec<i8>>() = vec![-1];
        assert_eq!(slot.get::<Vec<i8>>(), &[-1]);
        assert!(slot.get::<Vec<u8>>().is_empty());
        assert_eq!(*slot.get::<u64>(), 0);
    }
}
