//! Where a line or a key lies, in 64 bits: in a memory-mapped input (its
//! number and offset), or in an [`Arena`] of copied bytes (a block and an
//! offset). The dedup set keeps its keys' places and the ladder its example
//! lines' places this way, so that a line read from a map is never copied.
//!
//! It knows bytes and offsets, nothing of what they mean.

/// A place, packed: the top bit says whether the bytes lie in a mapped input
/// (then the next 23 bits are the input and the low 40 the offset) or in an
/// arena (then the next 23 bits are the arena's block and the low 40 the
/// offset in it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Place(u64);

/// Why a place cannot be packed: more inputs, or a larger one, than 64 bits hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TooLarge;

impl Place {
    /// A place no packing makes: "no place", where a sentinel is cheaper
    /// than an `Option` (which would double the size).
    pub(crate) const NONE: Place = Place(u64::MAX);
    const IN_INPUT: u64 = 1 << 63;
    const INDEX_BITS: u32 = 23;
    const OFFSET_BITS: u32 = 40;

    /// Byte `offset` of mapped input `input`.
    pub(crate) fn in_input(input: usize, offset: usize) -> Result<Place, TooLarge> {
        Place::pack(Self::IN_INPUT, input, offset)
    }

    /// Byte `offset` of block `block` of an arena.
    fn in_arena(block: usize, offset: usize) -> Result<Place, TooLarge> {
        Place::pack(0, block, offset)
    }

    fn pack(flag: u64, index: usize, offset: usize) -> Result<Place, TooLarge> {
        if offset >> Self::OFFSET_BITS != 0 || index >> Self::INDEX_BITS != 0 {
            return Err(TooLarge);
        }
        let place = Place(flag | (index as u64) << Self::OFFSET_BITS | offset as u64);
        match place {
            Place::NONE => Err(TooLarge),
            place => Ok(place),
        }
    }

    /// Whether the place is in an input, its input (or block), and its offset.
    fn unpack(self) -> (bool, usize, usize) {
        let offset = (self.0 & ((1 << Self::OFFSET_BITS) - 1)) as usize;
        let index = ((self.0 & !Self::IN_INPUT) >> Self::OFFSET_BITS) as usize;
        (self.0 & Self::IN_INPUT != 0, index, offset)
    }

    /// The place as a plain number (to keep in a table slot).
    pub(crate) fn to_bits(self) -> u64 {
        self.0
    }

    /// The place a number from [`Place::to_bits`] stands for.
    pub(crate) fn from_bits(bits: u64) -> Place {
        Place(bits)
    }

    /// The input and offset of a place in an input.
    pub(crate) fn input_offset(self) -> Option<(usize, usize)> {
        match self.unpack() {
            (true, index, offset) if self != Place::NONE => Some((index, offset)),
            _ => None,
        }
    }

    /// The bytes the place lies in, and where it starts in them.
    pub(crate) fn locate<'s>(self, arena: &'s Arena, inputs: &[&'s [u8]]) -> (&'s [u8], usize) {
        let (in_input, index, offset) = self.unpack();
        let bytes = if in_input {
            inputs[index]
        } else {
            &arena.blocks[index][..]
        };
        (bytes, offset)
    }

    /// The `len` bytes at the place.
    pub(crate) fn bytes<'s>(self, len: usize, arena: &'s Arena, inputs: &[&'s [u8]]) -> &'s [u8] {
        let (bytes, start) = self.locate(arena, inputs);
        &bytes[start..start + len]
    }
}

/// Copied bytes, in blocks that are never reallocated: growing the arena
/// never copies what it holds.
#[derive(Default)]
pub(crate) struct Arena {
    blocks: Vec<Vec<u8>>,
    /// How many of the blocks hold bytes; those past them are kept, empty,
    /// from before [`Arena::clear`], to be filled again.
    used: usize,
}

impl Arena {
    const FIRST_BLOCK: usize = 1 << 12;
    const BLOCK: usize = 1 << 18;

    /// Copies `parts`, back to back, in; returns where they start.
    pub(crate) fn push(&mut self, parts: &[&[u8]]) -> Result<Place, TooLarge> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let fits = self.used > 0 && {
            let last = &self.blocks[self.used - 1];
            last.capacity() - last.len() >= len
        };
        if !fits {
            self.next_block(len);
        }
        let index = self.used - 1;
        let block = &mut self.blocks[index];
        let offset = block.len();
        for part in parts {
            block.extend_from_slice(part);
        }
        Place::in_arena(index, offset)
    }

    /// Starts a block with room for at least `len` bytes: the next one kept
    /// from before a clear, or a new one. Blocks double from FIRST_BLOCK up
    /// to BLOCK, so that a set of many shards holding few keys each (a live
    /// run's, cleared after each commit) reserves little it does not use.
    fn next_block(&mut self, len: usize) {
        let size = match self.used {
            0 => Self::FIRST_BLOCK,
            n => (self.blocks[n - 1].capacity() * 2).min(Self::BLOCK),
        }
        .max(len);
        match self.blocks.get_mut(self.used) {
            Some(kept) if kept.capacity() >= len => {}
            Some(kept) => *kept = Vec::with_capacity(size),
            None => self.blocks.push(Vec::with_capacity(size)),
        }
        self.used += 1;
    }

    /// Forgets every byte copied in, keeping the blocks to fill again: the
    /// places it gave out are void.
    pub(crate) fn clear(&mut self) {
        self.blocks.iter_mut().for_each(Vec::clear);
        self.used = 0;
    }

    /// The bytes the arena holds: those written, not the blocks' capacity.
    /// A fresh block's untouched tail is mostly address space, not memory
    /// (the system makes a page when it is first written; a block reusing
    /// freed memory is the exception): counting capacity made 512 shards'
    /// first blocks look like 128 MiB, so any smaller limit was "reached"
    /// by the first key of every shard.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }

    /// Whether nothing was copied in.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_in_inputs_and_arenas_come_back() {
        let input: &[u8] = b"http://a/\nhttp://b/\n";
        let mut arena = Arena::default();
        let copied = arena.push(&[b"http://", b"c/"]).unwrap();
        let mapped = Place::in_input(0, 10).unwrap();
        assert_eq!(mapped.bytes(9, &arena, &[input]), b"http://b/");
        assert_eq!(copied.bytes(9, &arena, &[input]), b"http://c/");
        assert_eq!(Place::from_bits(mapped.to_bits()), mapped);
    }

    #[test]
    fn a_cleared_arena_fills_its_blocks_again() {
        let mut arena = Arena::default();
        let key = [b'k'; 1000];
        let first: Vec<Place> = (0..600).map(|_| arena.push(&[&key]).unwrap()).collect();
        let (blocks, bytes) = (arena.blocks.len(), arena.memory_bytes());
        assert!(blocks > 1);
        arena.clear();
        assert_eq!(arena.memory_bytes(), 0);
        let big = [b'b'; 1 << 19];
        let again: Vec<Place> = (0..600).map(|_| arena.push(&[&key]).unwrap()).collect();
        assert_eq!(again, first, "the same blocks, filled in the same order");
        assert_eq!((arena.blocks.len(), arena.memory_bytes()), (blocks, bytes));
        // A key larger than any block gets one of its own.
        let place = arena.push(&[&big]).unwrap();
        assert_eq!(place.bytes(big.len(), &arena, &[]), &big[..]);
    }

    #[test]
    fn what_does_not_fit_is_refused_not_wrapped() {
        assert_eq!(Place::in_input(0, 1 << 40), Err(TooLarge));
        assert_eq!(Place::in_input(1 << 23, 0), Err(TooLarge));
        assert!(Place::in_input((1 << 23) - 1, (1 << 40) - 2).is_ok());
        // The last one is `Place::NONE`.
        assert_eq!(Place::in_input((1 << 23) - 1, (1 << 40) - 1), Err(TooLarge));
        assert_eq!(Place::NONE.input_offset(), None);
    }
}
