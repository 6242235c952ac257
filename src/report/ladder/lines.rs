//! Where the report's lines are and how they are read: the inputs' maps,
//! the copies of the streamed lines a class refers to, and the line
//! preparation `dedup` does (a column, repaired, resolved; a crawl index's
//! digest).
//!
//! It knows places, inputs and line layouts; nothing of keys, classes or
//! steps.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use super::Options;
use crate::line::ColumnScratch;
use crate::line::crawl_index::IndexLines;
use crate::pipeline::Rejection;
use crate::pipeline::chunks::{Chunk, ChunkBytes};
use crate::pipeline::hash::{InMemoryPrints, PrintHasher};
use crate::pipeline::input::Input;
use crate::pipeline::place::Place;

/// The lines a table's classes refer to: in a mapped input they are read
/// where they lie; from standard input, which is read as a stream, they are
/// copied when a class first refers to them.
#[derive(Default)]
pub(super) struct LineStore {
    copies: HashMap<Place, Range<usize>, PrintHasher>,
    bytes: Vec<u8>,
}

impl LineStore {
    /// Keeps `line` (at `place`, in `chunk`) if it would not outlive the chunk.
    pub(super) fn keep(&mut self, chunk: &Chunk<'_>, place: Place, line: &[u8]) {
        if let ChunkBytes::Owned(_) = chunk.bytes {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(line);
            self.copies.insert(place, start..self.bytes.len());
        }
    }

    /// The line at `place`.
    pub(super) fn line<'s>(&'s self, place: Place, maps: &[&'s [u8]]) -> &'s [u8] {
        if let Some(range) = self.copies.get(&place) {
            return &self.bytes[range.clone()];
        }
        let (input, offset) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        let rest = &maps[input][offset..];
        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
        line.strip_suffix(b"\r").unwrap_or(line)
    }
}

/// A line being counted: its place, and while its chunk is at hand, its bytes.
#[derive(Clone, Copy)]
pub(super) struct LineAt<'c, 'a> {
    pub(super) place: Place,
    pub(super) in_chunk: Option<(&'c Chunk<'a>, &'c [u8])>,
}

/// What the report reads and how: the inputs' maps, the line preparation.
pub(super) struct Reading<'r, 'a> {
    pub(super) maps: Vec<&'a [u8]>,
    pub(super) options: &'r Options,
    pub(super) prints: InMemoryPrints,
    pub(super) lines: IndexLines,
}

impl<'r, 'a> Reading<'r, 'a> {
    /// Reads `inputs` as `options` say.
    pub(super) fn new(inputs: &'a [Input], options: &'r Options) -> Reading<'r, 'a> {
        Reading {
            maps: inputs
                .iter()
                .map(|i| i.bytes().unwrap_or_default())
                .collect(),
            options,
            prints: InMemoryPrints::new(),
            lines: IndexLines::new(options.columns.clone(), options.index, inputs.len()),
        }
    }

    /// Calls `with` on the URI `line` (of input `source`) stands for.
    fn with_uri<T>(
        &self,
        line: &[u8],
        source: usize,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<T, Rejection> {
        self.lines.with_uri(line, source, scratch, with)
    }

    /// The digest of the content `line` says its URI served, if any.
    pub(super) fn digest<'l>(&self, line: &'l [u8], source: usize) -> Option<Cow<'l, [u8]>> {
        self.lines.digest(line, source)
    }

    /// The target `line` (of input `source`) redirects to, resolved, if it
    /// is a redirect whose target the index names.
    pub(super) fn redirect(&self, line: &[u8], source: usize) -> Option<Vec<u8>> {
        let read = self.lines.read(line, source).ok()?;
        let mut scratch = ColumnScratch::default();
        let target = self
            .lines
            .with_redirect_of(&read, &mut scratch, |t| Ok(t.to_vec()));
        target?.ok()
    }

    /// [`Reading::with_uri`] on the line at `place`, kept in `lines`.
    pub(super) fn with_uri_at<T>(
        &self,
        place: Place,
        lines: &LineStore,
        scratch: &mut ColumnScratch,
        with: impl FnOnce(&[u8]) -> Result<T, Rejection>,
    ) -> Result<T, Rejection> {
        let (source, _) = place
            .input_offset()
            .expect("the ladder places lines in inputs");
        self.with_uri(lines.line(place, &self.maps), source, scratch, with)
    }

    /// The URI of the line at `place` as it entered the ladder (a column,
    /// repaired, resolved), or the line if it has none.
    pub(super) fn spelling(&self, place: Place, lines: &LineStore) -> Vec<u8> {
        self.with_uri_at(place, lines, &mut ColumnScratch::default(), |uri| {
            Ok(uri.to_vec())
        })
        .unwrap_or_else(|_| lines.line(place, &self.maps).to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::tab_separated;
    use super::*;
    use crate::pipeline::chunks::ChunkBytes;

    fn chunk(bytes: ChunkBytes<'_>) -> Chunk<'_> {
        Chunk {
            source: 0,
            offset: 0,
            input_bytes: bytes.len() as u64,
            bytes,
            binary: false,
        }
    }

    #[test]
    fn a_streamed_line_is_copied_and_a_mapped_one_read_where_it_lies() {
        let mapped = b"http://a/\r\nhttp://b/";
        let (first, second) = (
            Place::in_input(0, 0).unwrap(),
            Place::in_input(0, 11).unwrap(),
        );
        let mut store = LineStore::default();
        store.keep(&chunk(ChunkBytes::Borrowed(mapped)), first, b"http://a/");
        assert!(store.bytes.is_empty());
        assert_eq!(store.line(first, &[mapped]), b"http://a/");
        assert_eq!(store.line(second, &[mapped]), b"http://b/");
        let streamed = chunk(ChunkBytes::Owned(b"http://c/\n".to_vec()));
        store.keep(&streamed, first, b"http://c/");
        // The copy is read, not the map.
        assert_eq!(store.line(first, &[mapped]), b"http://c/");
    }

    #[test]
    fn a_spelling_is_the_lines_uri_as_the_ladder_takes_it() {
        let inputs: &[u8] = b"x\thttp://a/\nno column\n";
        let options = Options {
            columns: tab_separated(1),
            ..Options::default()
        };
        let reading = Reading {
            maps: vec![inputs],
            options: &options,
            prints: InMemoryPrints::new(),
            lines: IndexLines::new(options.columns.clone(), None, 1),
        };
        let store = LineStore::default();
        let spelling = |offset| reading.spelling(Place::in_input(0, offset).unwrap(), &store);
        assert_eq!(spelling(0), b"http://a/");
        // A line without the column is shown whole.
        assert_eq!(spelling(12), b"no column");
    }
}
