//! The protocol rung's work on a path: runs of slashes, index files and
//! the trailing slash.
//!
//! It knows paths as bytes; not URIs.

use crate::swar;

/// Writes each run of `/`s in the path as one.
pub(super) fn collapse_slashes(out: &mut Vec<u8>, start: usize) -> bool {
    // Most paths have no `//`: they are searched, not rewritten.
    let Some(first) = swar::find_pair(&out[start..], b'/', b'/') else {
        return false;
    };
    let before = out.len();
    let after_first = start + first + 1;
    let mut write = after_first;
    for read in after_first..out.len() {
        let byte = out[read];
        if byte == b'/' && out[write - 1] == b'/' {
            continue;
        }
        out[write] = byte;
        write += 1;
    }
    out.truncate(write);
    write != before
}

/// The last segments `drop-index-file` removes, compared without regard to case.
const INDEX_FILES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "index.asp",
    "default.aspx",
    "default.asp",
    "default.htm",
];

/// The lengths of [`INDEX_FILES`]' names, shortest to longest: a last
/// segment of another length is none.
const INDEX_FILE_LENGTHS: std::ops::RangeInclusive<usize> = {
    let (mut shortest, mut longest) = (usize::MAX, 0);
    let mut i = 0;
    while i < INDEX_FILES.len() {
        let len = INDEX_FILES[i].len();
        shortest = if len < shortest { len } else { shortest };
        longest = if len > longest { len } else { longest };
        i += 1;
    }
    shortest..=longest
};

pub(super) fn drop_index_file(out: &mut Vec<u8>, start: usize) -> bool {
    let Some(slash) = index_file_slash(&out[start..]) else {
        return false;
    };
    out.truncate(start + slash + 1);
    true
}

/// The last bytes of [`INDEX_FILES`]' names, lower-cased, as a bitmap
/// over ASCII: a path ending in another byte (most end in `/`) ends in
/// none of them.
const INDEX_FILE_LAST_BYTES: u128 = {
    let mut bits = 0u128;
    let mut i = 0;
    while i < INDEX_FILES.len() {
        let name = INDEX_FILES[i].as_bytes();
        bits |= 1 << name[name.len() - 1].to_ascii_lowercase();
        i += 1;
    }
    bits
};

/// Where the `/` before a last segment that is an index file stands.
pub(super) fn index_file_slash(path: &[u8]) -> Option<usize> {
    let last_byte = path.last()?.to_ascii_lowercase();
    if last_byte >= 128 || INDEX_FILE_LAST_BYTES & 1 << last_byte == 0 {
        return None;
    }
    // An index file's name holds no `/`: a last segment of its length ends
    // the path after a `/`, so only the path's last bytes are read (no
    // search for the last `/` through the whole path).
    for len in INDEX_FILE_LENGTHS {
        let Some(slash) = path.len().checked_sub(len + 1) else {
            break;
        };
        let last = &path[slash + 1..];
        if path[slash] == b'/'
            && INDEX_FILES
                .iter()
                .any(|f| last.eq_ignore_ascii_case(f.as_bytes()))
        {
            return Some(slash);
        }
    }
    None
}

/// Whether `trailing-slash=add` adds one: a path whose last segment has no `.`.
pub(super) fn wants_trailing_slash(path: &[u8]) -> bool {
    if path.is_empty() || path.ends_with(b"/") {
        return false;
    }
    let last = &path[path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1)..];
    !last.contains(&b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last segment found by a search for the last `/`, as the rule reads.
    fn naive_index_file_slash(path: &[u8]) -> Option<usize> {
        let slash = path.iter().rposition(|&b| b == b'/')?;
        INDEX_FILES
            .iter()
            .any(|f| path[slash + 1..].eq_ignore_ascii_case(f.as_bytes()))
            .then_some(slash)
    }

    proptest::proptest! {
        #[test]
        fn index_file_slash_agrees_with_a_search_for_the_last_slash(
            path in "(/[a-zA-Z.]{0,4}){0,3}(/|/index\\.html?|/INDEX\\.PHP|/default\\.aspx?|/Default\\.htm|/x/index\\.asp|index\\.html)?"
        ) {
            proptest::prop_assert_eq!(index_file_slash(path.as_bytes()), naive_index_file_slash(path.as_bytes()));
        }
    }

    #[test]
    fn index_file_lengths_hold_every_index_file() {
        assert!(
            INDEX_FILES
                .iter()
                .all(|f| INDEX_FILE_LENGTHS.contains(&f.len()))
        );
    }
}
