//! Sorting distinct keys in byte order (`LC_ALL=C sort`'s), fast: a most
//! significant digit radix sort whose digits are 16-byte slices of the keys.
//!
//! Comparing keys one against another touches two keys' bytes wherever
//! they lie, a cache miss each, n log n times. Here each key's next sixteen
//! bytes are copied beside its number into a small entry, entries are
//! sorted by those integers (in cache), and only entries that tie on all
//! sixteen bytes read their keys again, sixteen bytes further on. URLs
//! share long prefixes (`https://www.`), so most keys are read a few times,
//! never n log n times. (Digits of 8 bytes, in one `u128` with the number,
//! took 7 % longer on the benchmark corpus: twice the levels.)
//!
//! It knows byte strings; nothing of what they hold.

use rayon::prelude::*;

use super::set::prefetch;

/// Below this many entries a group is sorted on one thread.
const PARALLEL_ENTRIES: usize = 1 << 14;

/// How many key bytes an entry holds: one digit of the sort.
const DIGIT: usize = 16;

/// An entry: a key's [`DIGIT`] bytes at the current depth (big-endian,
/// zero-padded), how many bytes of the key are left there (`DIGIT + 1`
/// meaning more), and the key's number.
#[derive(Clone, Copy)]
struct Entry {
    high: u64,
    low: u64,
    /// The bytes left, then the number, in the low 32 bits.
    tail: u64,
}

/// What entries are ordered by: the bytes and the length left.
fn digit(entry: Entry) -> (u64, u64, u64) {
    (entry.high, entry.low, entry.tail >> 32)
}

fn number(entry: Entry) -> u32 {
    entry.tail as u32
}

/// Whether the key goes on past the entry's bytes.
fn goes_on(entry: Entry) -> bool {
    (entry.tail >> 32) as usize > DIGIT
}

fn entry(key: &[u8], depth: usize, number: u32) -> Entry {
    let rest = key.get(depth..).unwrap_or_default();
    let bytes = match rest.first_chunk::<DIGIT>() {
        // One load, the usual case.
        Some(digit) => *digit,
        None => {
            let mut padded = [0u8; DIGIT];
            padded[..rest.len()].copy_from_slice(rest);
            padded
        }
    };
    let value = u128::from_be_bytes(bytes);
    let left = rest.len().min(DIGIT + 1) as u64;
    Entry {
        high: (value >> 64) as u64,
        low: value as u64,
        tail: (left << 32) | u64::from(number),
    }
}

/// The numbers of the `items` that are `wanted`, in byte order of their
/// keys (`key(item)`, which must be distinct), on the current rayon pool;
/// there must be fewer than 2³² items.
///
/// A zero-padded slice ties a key with the same key plus NUL bytes; the
/// length left breaks that tie, shorter first, as a prefix sorts first.
pub(crate) fn sorted<T: Sync>(
    items: &[T],
    key: impl Fn(&T) -> &[u8] + Sync,
    wanted: impl Fn(u32) -> bool + Sync,
) -> Vec<u32> {
    let len = u32::try_from(items.len()).expect("at most 2^32 keys");
    let keys = Keys { items, key };
    let mut entries: Vec<Entry> = (0..len)
        .into_par_iter()
        .filter(|&n| wanted(n))
        .map(|n| entry(keys.get(n), 0, n))
        .collect();
    sort_group(&mut entries, 0, &keys);
    entries.into_par_iter().map(number).collect()
}

/// The items and how to read their keys.
struct Keys<'i, T, K> {
    items: &'i [T],
    key: K,
}

impl<T, K: Fn(&T) -> &[u8]> Keys<'_, T, K> {
    fn get(&self, n: u32) -> &[u8] {
        (self.key)(&self.items[n as usize])
    }

    /// Asks for the item of entry `far` (for [`Keys::prefetch_key`] later),
    /// and for the bytes at `depth` of the key of entry `near`, if any.
    fn prefetch(&self, far: Option<&Entry>, near: Option<&Entry>, depth: usize) {
        if let Some(&far) = far {
            prefetch(&self.items[number(far) as usize] as *const T as *const u8);
        }
        if let Some(&near) = near {
            prefetch(self.get(number(near)).as_ptr().wrapping_add(depth));
        }
    }
}

/// Sorts entries that share their keys' first `depth` bytes and hold the
/// next [`DIGIT`]: large groups in parallel, each tie group refined on its own.
/// The recursion is only as deep as [`PARALLEL_DEPTH`] allows: past it (and
/// for small groups) the work goes on without recursion, however long the
/// keys' shared prefixes.
fn sort_group<T: Sync, K: Fn(&T) -> &[u8] + Sync>(
    entries: &mut [Entry],
    depth: usize,
    keys: &Keys<'_, T, K>,
) {
    if entries.len() < PARALLEL_ENTRIES || depth >= PARALLEL_DEPTH {
        return sort_in_place(entries, depth, keys);
    }
    entries.par_sort_unstable_by_key(|&e| digit(e));
    entries.par_chunk_by_mut(tie).for_each(|group| {
        if group.len() > 1 && goes_on(group[0]) {
            group
                .par_chunks_mut(PARALLEL_ENTRIES)
                .for_each(|piece| refill(piece, depth, keys));
            sort_group(group, depth + DIGIT, keys);
        }
    });
}

/// How deep (in key bytes) groups are still sorted in parallel.
const PARALLEL_DEPTH: usize = 256;

/// [`sort_group`] on one thread, with a stack of groups left to refine.
fn sort_in_place<T, K: Fn(&T) -> &[u8]>(
    entries: &mut [Entry],
    depth: usize,
    keys: &Keys<'_, T, K>,
) {
    let mut groups = vec![(0, entries.len(), depth)];
    while let Some((start, end, depth)) = groups.pop() {
        let group = &mut entries[start..end];
        group.sort_unstable_by_key(|&e| digit(e));
        let mut at = start;
        for tied in group.chunk_by_mut(tie) {
            if tied.len() > 1 && goes_on(tied[0]) {
                refill(tied, depth, keys);
                groups.push((at, at + tied.len(), depth + DIGIT));
            }
            at += tied.len();
        }
    }
}

fn tie(a: &Entry, b: &Entry) -> bool {
    digit(*a) == digit(*b)
}

/// Each entry made the entry of the same key, a digit further on. The
/// keys lie anywhere: each item is asked for 2 × [`PREFETCH_AHEAD`]
/// entries early and its key's bytes [`PREFETCH_AHEAD`] early, so that
/// their cache misses overlap.
fn refill<T, K: Fn(&T) -> &[u8]>(entries: &mut [Entry], depth: usize, keys: &Keys<'_, T, K>) {
    for i in 0..entries.len() {
        let (far, near) = (
            entries.get(i + 2 * PREFETCH_AHEAD),
            entries.get(i + PREFETCH_AHEAD),
        );
        keys.prefetch(far, near, depth + DIGIT);
        let n = number(entries[i]);
        entries[i] = entry(keys.get(n), depth + DIGIT, n);
    }
}

/// How many entries ahead a refill asks for a key's bytes.
const PREFETCH_AHEAD: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(keys: &[Vec<u8>]) {
        let mut keys = keys.to_vec();
        keys.sort();
        keys.dedup();
        // Any order in, byte order out.
        keys.reverse();
        let third = keys.len() / 3;
        keys.rotate_left(third);
        let mut expected = keys.clone();
        expected.sort();
        let got: Vec<Vec<u8>> = sorted(&keys, |k| &k[..], |_| true)
            .into_iter()
            .map(|n| keys[n as usize].clone())
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn prefixes_nul_bytes_and_long_shared_starts() {
        let keys: Vec<Vec<u8>> = [
            &b""[..],
            b"a",
            b"a\0",
            b"a\0\0\0\0\0\0\0",
            b"a\0\0\0\0\0\0\0\0",
            b"a\0\0\0\0\0\0\0\0\0",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgh\0",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
            b"https://www.example.com/a",
            b"https://www.example.com/",
            b"https://www.example.com/a/b/c/d/e/f",
            b"https://www.example.com/a/b/c/d/e/g",
            b"http://www.example.com/",
        ]
        .iter()
        .map(|k| k.to_vec())
        .collect();
        check(&keys);
    }

    #[test]
    fn shared_prefixes_longer_than_any_stack() {
        // Many keys past the parallel depth; fewer differing only after
        // 20 KB (1,250 levels of a digit), and ending at every depth.
        let shared = |byte: u8, len: usize, range: std::ops::Range<usize>| {
            range.map(move |i| [vec![byte; len], format!("{i}").into_bytes()].concat())
        };
        let mut keys: Vec<Vec<u8>> = shared(b'a', 400, 0..17_000).collect();
        keys.extend(shared(b'b', 20_000, 0..1_000));
        keys.extend((0..400).map(|i| vec![b'b'; i * 50]));
        check(&keys);
    }

    #[test]
    fn many_keys_sorted_in_parallel_groups() {
        // More than PARALLEL_ENTRIES, sharing long prefixes in groups.
        let keys: Vec<Vec<u8>> = (0..40_000u32)
            .map(|i| format!("https://host{}.example/{}/{}", i % 7, i % 1000, i).into_bytes())
            .collect();
        check(&keys);
    }

    proptest! {
        #[test]
        fn agrees_with_the_standard_sort(
            keys in proptest::collection::vec(
                proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), any::<u8>()], 0..30),
                0..300,
            )
        ) {
            check(&keys);
        }
    }
}
