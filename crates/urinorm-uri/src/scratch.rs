//! Scratch space: buffers a thread owns and lends down its calls, so that
//! the work of one line allocates nothing, and no buffer is shared between
//! threads or borrowed twice (no `thread_local!`, no `RefCell`). A worker
//! makes its scratch once and passes it to every call; a call that nests
//! takes a field of its own.
//!
//! This module owns the one open-ended kind, [`Slot`]; each layer's
//! scratch is a struct in that layer.

use std::any::Any;
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
pub struct Slot(Option<Box<dyn Any + Send + Sync>>);

impl Slot {
    /// The value of type `T` in the slot: the one made before, or a new one
    /// when the slot is empty or holds another type.
    pub fn get<T: Default + Send + Sync + 'static>(&mut self) -> &mut T {
        if !self.0.as_ref().is_some_and(|value| value.is::<T>()) {
            self.0 = Some(Box::new(T::default()));
        }
        self.0
            .as_mut()
            .and_then(|value| value.downcast_mut())
            .expect("the slot holds a T")
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
