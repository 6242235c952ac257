//! A step's classes: each key's fingerprint with the class's size, its
//! first line and the first line that differs from it at the step below
//! (what an example merge shows), and the lines they refer to.
//!
//! It knows fingerprints and places; nothing of how a key is made, which
//! pass fills the table, or what a step is.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::lines::{LineAt, LineStore};
use crate::pipeline::hash::PrintHasher;
use crate::pipeline::place::Place;

pub(super) use crate::report::evidence::{Print, REJECTED};

/// What a step remembers of one class.
#[derive(Clone, Copy)]
pub(super) struct Class {
    pub(super) size: u64,
    /// The step below's fingerprint of the class's first line (low bits).
    pub(super) below: u64,
    pub(super) first: Place,
    /// The first line whose fingerprint below differs from the first's, or
    /// [`NO_OTHER`] (kept as a plain place: classes are most of the memory).
    pub(super) other: Place,
}

/// No line of the class differs below (yet).
pub(super) const NO_OTHER: Place = Place::NONE;

/// One step's classes, and the lines they refer to.
#[derive(Default)]
pub(super) struct Classes {
    pub(super) map: HashMap<Print, Class, PrintHasher>,
    pub(super) lines: LineStore,
}

impl Classes {
    /// Adds `size` lines to the class of `print`, the first of them with
    /// fingerprint `below` at the step below. Called in input order, so
    /// `first` and `other` are the earliest such lines. `line` tells where
    /// that first line is; it is asked only when the class takes its place.
    pub(super) fn absorb<'c, 'a: 'c>(
        &mut self,
        print: Print,
        below: Print,
        size: u64,
        line: impl FnOnce() -> LineAt<'c, 'a>,
    ) {
        let below = below as u64;
        let taken = match self.map.entry(print) {
            Entry::Occupied(mut entry) => {
                let class = entry.get_mut();
                class.size += size;
                if class.other != NO_OTHER || class.below == below {
                    return;
                }
                let line = line();
                class.other = line.place;
                line
            }
            Entry::Vacant(entry) => {
                let line = line();
                entry.insert(Class {
                    size,
                    below,
                    first: line.place,
                    other: NO_OTHER,
                });
                line
            }
        };
        if let Some((chunk, bytes)) = taken.in_chunk {
            self.lines.keep(chunk, taken.place, bytes);
        }
    }

    pub(super) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of input 0 at `offset`, not in a chunk at hand.
    fn at(offset: usize) -> LineAt<'static, 'static> {
        LineAt {
            place: Place::in_input(0, offset).unwrap(),
            in_chunk: None,
        }
    }

    #[test]
    fn a_class_keeps_its_first_line_and_the_first_that_differs_below() {
        let mut table = Classes::default();
        table.absorb(7, 1, 1, || at(0));
        // The same spelling below again: nothing to show.
        table.absorb(7, 1, 1, || at(10));
        assert_eq!(table.map[&7].other, NO_OTHER);
        table.absorb(7, 2, 1, || at(20));
        table.absorb(7, 3, 1, || at(30));
        table.absorb(8, 3, 5, || at(40));
        let class = table.map[&7];
        assert_eq!(class.size, 4);
        assert_eq!(class.first, at(0).place);
        assert_eq!(class.other, at(20).place);
        assert_eq!((table.map[&8].size, table.len()), (5, 2));
    }

    #[test]
    fn a_line_is_asked_for_only_when_a_class_takes_it() {
        let mut table = Classes::default();
        table.absorb(7, 1, 1, || at(0));
        table.absorb(7, 1, 1, || unreachable!("the class has its first line"));
        table.absorb(7, 2, 1, || at(20));
        table.absorb(7, 3, 1, || unreachable!("the class has its other line"));
        assert_eq!(table.map[&7].size, 4);
    }
}
