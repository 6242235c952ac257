//! Arrow arrays in and out, without arrow-rs: a `string` or `large_string`
//! array is read in place through the Arrow C data interface (the
//! `__arrow_c_array__` PyCapsules pyarrow 14+ gives), and a result is
//! written as the buffers of an Arrow string array (keys) or of a
//! `fixed_size_binary(16)` array (fingerprints), which pyarrow wraps where
//! they are (`foreign_buffer`, `Array.from_buffers`).
//!
//! Why not arrow-rs or pyo3-arrow: the batch loop needs two buffers of one
//! array type and no compute kernel; the C data interface is a stable ABI of
//! two `repr(C)` structs, and arrow-rs would bring its crates into the
//! build to read them.

use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::ops::Range;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use urinorm::fingerprint::{Fingerprint, fingerprint};
use urinorm::line::{KeyScratch, NormalizeLines};
use urinorm::pipeline::Rejection;

mod threads;

/// `struct ArrowSchema` of the C data interface.
#[repr(C)]
struct ArrowSchema {
    format: *const c_char,
    _name: *const c_char,
    _metadata: *const c_char,
    _flags: i64,
    _n_children: i64,
    _children: *mut *mut ArrowSchema,
    _dictionary: *mut ArrowSchema,
    _release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    _private_data: *mut c_void,
}

/// `struct ArrowArray` of the C data interface.
#[repr(C)]
struct ArrowArray {
    length: i64,
    _null_count: i64,
    offset: i64,
    n_buffers: i64,
    _n_children: i64,
    buffers: *mut *const c_void,
    _children: *mut *mut ArrowArray,
    _dictionary: *mut ArrowArray,
    _release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    _private_data: *mut c_void,
}

/// Offsets of either width, as the array stores them.
enum Offsets<'a> {
    Small(&'a [i32]),
    Large(&'a [i64]),
}

/// A string array borrowed from its capsules: valid while they live, which
/// the caller ensures by holding them (the capsules release the array when
/// they are collected, not before; nothing here moves it out).
pub struct StringArray<'a> {
    length: usize,
    /// The array's offset into its buffers (a pyarrow slice has one).
    offset: usize,
    validity: Option<&'a [u8]>,
    offsets: Offsets<'a>,
    data: &'a [u8],
}

impl<'a> StringArray<'a> {
    /// Reads the array the capsules describe; a TypeError unless it is a
    /// `string` or `large_string` array.
    pub fn borrow(
        schema: &'a Bound<'_, PyCapsule>,
        array: &'a Bound<'_, PyCapsule>,
    ) -> PyResult<StringArray<'a>> {
        let schema = schema.pointer_checked(Some(c"arrow_schema"))?;
        let array = array.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: the capsule names promise these structs (the PyCapsule
        // interface of Arrow), and the capsules, borrowed for 'a, own them.
        let (schema, array) = unsafe {
            (
                schema.cast::<ArrowSchema>().as_ref(),
                array.cast::<ArrowArray>().as_ref(),
            )
        };
        // SAFETY: `format` is a NUL-terminated string (C data interface).
        let format = unsafe { CStr::from_ptr(schema.format) };
        let large = match format.to_bytes() {
            b"u" => false,
            b"U" => true,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "normalize_batch takes a string or large_string array, not Arrow format '{}'",
                    String::from_utf8_lossy(other)
                )));
            }
        };
        let length = usize::try_from(array.length).expect("an array's length is not negative");
        let offset = usize::try_from(array.offset).expect("an array's offset is not negative");
        if length == 0 {
            // Producers may leave the buffers of an empty array null.
            return Ok(StringArray {
                length,
                offset: 0,
                validity: None,
                offsets: if large {
                    Offsets::Large(&[0])
                } else {
                    Offsets::Small(&[0])
                },
                data: &[],
            });
        }
        if array.n_buffers != 3 {
            return Err(PyTypeError::new_err(format!(
                "a string array has 3 buffers, this one {}",
                array.n_buffers
            )));
        }
        // SAFETY: a string array has three buffers: validity (may be null),
        // offsets (offset + length + 1 of them), and data, as long as the
        // last offset says; all live as long as the array.
        unsafe {
            let buffers = std::slice::from_raw_parts(array.buffers, 3);
            let entries = offset + length + 1;
            let bits = (offset + length).div_ceil(8);
            let validity = (!buffers[0].is_null())
                .then(|| std::slice::from_raw_parts(buffers[0].cast::<u8>(), bits));
            let (offsets, data_len) = if large {
                let offsets = std::slice::from_raw_parts(buffers[1].cast::<i64>(), entries);
                (Offsets::Large(offsets), offsets[entries - 1] as usize)
            } else {
                let offsets = std::slice::from_raw_parts(buffers[1].cast::<i32>(), entries);
                (Offsets::Small(offsets), offsets[entries - 1] as usize)
            };
            let data = std::slice::from_raw_parts(buffers[2].cast::<u8>(), data_len);
            Ok(StringArray {
                length,
                offset,
                validity,
                offsets,
                data,
            })
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.length
    }

    /// The bytes of its values (of a slice, of the slice's values only).
    pub fn value_bytes(&self) -> usize {
        let (first, last) = (self.offset, self.offset + self.length);
        match self.offsets {
            Offsets::Small(o) => (o[last] - o[first]) as usize,
            Offsets::Large(o) => (o[last] - o[first]) as usize,
        }
    }

    /// Whether its offsets are 64-bit.
    pub fn large(&self) -> bool {
        matches!(self.offsets, Offsets::Large(_))
    }

    /// The bytes of value `i`, `None` when it is null.
    pub fn value(&self, i: usize) -> Option<&'a [u8]> {
        let at = self.offset + i;
        if let Some(validity) = self.validity
            && validity[at / 8] & (1 << (at % 8)) == 0
        {
            return None;
        }
        let (start, end) = match self.offsets {
            Offsets::Small(o) => (o[at] as usize, o[at + 1] as usize),
            Offsets::Large(o) => (o[at] as usize, o[at + 1] as usize),
        };
        Some(&self.data[start..end])
    }
}

/// The results are more bytes than 32-bit offsets can address.
#[derive(Debug)]
pub struct TooLarge;

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the results exceed the 2 GiB of a string array: pass a pyarrow large_string array",
        )
    }
}

/// An offsets buffer, 32- or 64-bit: typed, so that it is aligned as Arrow
/// requires.
enum OffsetsOut {
    Small(Vec<i32>),
    Large(Vec<i64>),
}

/// What a batch's values are: keys (with 64-bit offsets or 32-bit) or
/// fingerprints.
#[derive(Clone, Copy)]
pub enum BatchValues {
    Keys { large: bool },
    Fingerprints,
}

/// A row to make a key of: a reference, and the base it is resolved
/// against when the row has its own.
pub type Row<'a> = (&'a [u8], Option<&'a [u8]>);

/// Rows to make keys of, read by index from any thread.
pub trait Rows: Sync {
    fn len(&self) -> usize;
    /// The bytes of all the values, about.
    fn bytes(&self) -> usize;
    /// Appends the key of row `i` to `out`: `None` (nothing appended) when
    /// the row is null, an error (nothing appended) when it has no key.
    fn write(
        &self,
        i: usize,
        maker: &KeyMaker<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratches,
    ) -> Option<Result<(), Rejection>>;
    /// Why row `i` has no key, `error` being what [`Rows::write`] said.
    fn reason(&self, i: usize, maker: &KeyMaker<'_>, error: &Rejection) -> String;
}

/// Rows of one URI each (and its base, if the row has one).
pub trait OneUri: Sync {
    fn len(&self) -> usize;
    /// Row `i`, `None` when it is null (its reference, or its base).
    fn row(&self, i: usize) -> Option<Row<'_>>;
    /// The bytes of all the references, about.
    fn bytes(&self) -> usize;
}

impl<T: OneUri + ?Sized> Rows for T {
    fn len(&self) -> usize {
        OneUri::len(self)
    }

    fn bytes(&self) -> usize {
        OneUri::bytes(self)
    }

    fn write(
        &self,
        i: usize,
        maker: &KeyMaker<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratches,
    ) -> Option<Result<(), Rejection>> {
        self.row(i).map(|row| maker.write(row, out, scratch))
    }

    fn reason(&self, i: usize, maker: &KeyMaker<'_>, error: &Rejection) -> String {
        let row = self.row(i).expect("a row without a key is not null");
        maker.reason(row, error)
    }
}

impl OneUri for StringArray<'_> {
    fn len(&self) -> usize {
        self.length
    }

    fn row(&self, i: usize) -> Option<Row<'_>> {
        self.value(i).map(|value| (value, None))
    }

    fn bytes(&self) -> usize {
        self.value_bytes()
    }
}

impl OneUri for [Option<&str>] {
    fn len(&self) -> usize {
        <[Option<&str>]>::len(self)
    }

    fn row(&self, i: usize) -> Option<Row<'_>> {
        self[i].map(|value| (value.as_bytes(), None))
    }

    fn bytes(&self) -> usize {
        self.iter().flatten().map(|t| t.len()).sum()
    }
}

/// Rows of several URIs, one a column, whose key is their keys joined by
/// `delimiter`: the command line's `--key-fields`.
pub struct Joined<'a> {
    pub columns: Vec<StringArray<'a>>,
    pub delimiter: u8,
}

impl Joined<'_> {
    /// The first column of row `i` without a key, and why.
    fn first_error(
        &self,
        i: usize,
        maker: &KeyMaker<'_>,
        scratch: &mut Scratches,
    ) -> Option<(usize, Rejection)> {
        let mut key = Vec::new();
        self.columns.iter().enumerate().find_map(|(n, column)| {
            let value = column.value(i)?;
            maker
                .write((value, None), &mut key, scratch)
                .err()
                .map(|e| (n, e))
        })
    }
}

impl Rows for Joined<'_> {
    fn len(&self) -> usize {
        self.columns.first().map_or(0, StringArray::len)
    }

    fn bytes(&self) -> usize {
        self.columns.iter().map(StringArray::value_bytes).sum()
    }

    fn write(
        &self,
        i: usize,
        maker: &KeyMaker<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratches,
    ) -> Option<Result<(), Rejection>> {
        // A null in any column is a null row, told before anything is written.
        if self.columns.iter().any(|column| column.value(i).is_none()) {
            return None;
        }
        let start = out.len();
        for (n, column) in self.columns.iter().enumerate() {
            if n > 0 {
                out.push(self.delimiter);
            }
            let value = column.value(i).expect("no column of this row is null");
            if let Err(e) = maker.write((value, None), out, scratch) {
                out.truncate(start);
                return Some(Err(e));
            }
        }
        Some(Ok(()))
    }

    fn reason(&self, i: usize, maker: &KeyMaker<'_>, error: &Rejection) -> String {
        let (column, error) = (self.first_error(i, maker, &mut Scratches::default()))
            .unwrap_or_else(|| (0, error.clone()));
        format!("columns[{column}]: {error}")
    }
}

/// References and, row for row, the bases they are resolved against.
pub struct Resolving<'a> {
    pub references: StringArray<'a>,
    pub bases: StringArray<'a>,
}

impl OneUri for Resolving<'_> {
    fn len(&self) -> usize {
        self.references.length
    }

    fn row(&self, i: usize) -> Option<Row<'_>> {
        Some((self.references.value(i)?, Some(self.bases.value(i)?)))
    }

    fn bytes(&self) -> usize {
        self.references.value_bytes() + self.bases.value_bytes()
    }
}

/// How a row becomes its key: the line mapper of the options, which
/// knows the key, how a value is read (repaired, resolved against a base)
/// and what it takes.
pub struct KeyMaker<'m> {
    pub lines: &'m NormalizeLines,
    /// Whether a batch says, beside each null, why the row has no key.
    pub reasons: bool,
}

impl KeyMaker<'_> {
    /// Appends the key of `row` to `out`; or, with nothing appended, why
    /// the row has none (it is not a URI reference, or its base not an
    /// absolute URI).
    pub(crate) fn write(
        &self,
        (reference, base): Row<'_>,
        out: &mut Vec<u8>,
        scratch: &mut Scratches,
    ) -> Result<(), Rejection> {
        self.lines.write_value_key(reference, base, out, scratch)
    }

    /// Why `row` has no key, `error` being what [`KeyMaker::write`] said.
    pub(crate) fn reason(&self, (_, base): Row<'_>, error: &Rejection) -> String {
        self.lines.value_refusal(base, error)
    }
}

/// The buffers a batch reuses from row to row.
pub(crate) type Scratches = KeyScratch;

/// The fewest values a thread is given: below it, a thread costs more than
/// it saves. A multiple of 8, so that pieces' validity bits are whole bytes.
const PIECE_AT_LEAST: usize = 1 << 12;

/// Makes `made` of every value on `pool` (`None`: the calling thread
/// alone), the same whatever the threads.
pub fn make(
    maker: &KeyMaker<'_>,
    made: BatchValues,
    rows: &(impl Rows + ?Sized),
    pool: Option<&rayon::ThreadPool>,
) -> Batch {
    let len = rows.len();
    let Some(pool) = pool.filter(|pool| pool.current_num_threads() > 1 && len > PIECE_AT_LEAST)
    else {
        let mut batch = Batch::made(made, len, rows.bytes(), maker.reasons);
        batch.fill(maker, rows, 0..len);
        return batch;
    };
    // Several pieces a thread, so that one slow piece does not hold the rest.
    let piece = len
        .div_ceil(pool.current_num_threads() * 4)
        .next_multiple_of(8)
        .clamp(PIECE_AT_LEAST, threads::PIECE_AT_MOST);
    threads::make_on(pool, maker, made, rows, piece)
}

/// What a batch's values are, with the buffers their kind needs.
enum Shape {
    /// Keys, as an Arrow string array: offsets into `data`.
    Keys(OffsetsOut),
    /// The keys' 16-byte fingerprints, as an Arrow `fixed_size_binary(16)`
    /// array (no offsets); `key` is where each key is made first.
    Fingerprints { key: Vec<u8> },
}

/// The buffers of an Arrow array being written: one value per input, null
/// where the input was null or not a URI reference.
pub struct Batch {
    shape: Shape,
    data: Vec<u8>,
    /// The validity bitmap, least significant bit first.
    validity: Vec<u8>,
    nulls: usize,
    length: usize,
    /// The buffers reused from value to value.
    scratch: Scratches,
    /// When asked for: beside each value, why it is null, as the values of
    /// a `large_string` array (null where the value is not, or its input
    /// was null).
    reasons: Option<Box<Batch>>,
}

impl Batch {
    /// An empty batch of `made` for `capacity` values of about `bytes`
    /// bytes in all (canonical forms are about as long as their inputs),
    /// with a batch of reasons beside it when `reasons`.
    fn made(made: BatchValues, capacity: usize, bytes: usize, reasons: bool) -> Batch {
        let (shape, bytes) = match made {
            BatchValues::Keys { large: true } => {
                let offsets = OffsetsOut::Large(Vec::with_capacity(capacity + 1));
                (Shape::Keys(offsets), bytes)
            }
            BatchValues::Keys { large: false } => {
                let offsets = OffsetsOut::Small(Vec::with_capacity(capacity + 1));
                (Shape::Keys(offsets), bytes)
            }
            BatchValues::Fingerprints => {
                let shape = Shape::Fingerprints { key: Vec::new() };
                (shape, capacity * size_of::<Fingerprint>())
            }
        };
        let mut batch = Batch::new(shape, capacity, bytes);
        if reasons {
            let reasons = Batch::made(BatchValues::Keys { large: true }, capacity, 0, false);
            batch.reasons = Some(Box::new(reasons));
        }
        batch
    }

    /// A batch of `made` of `len` values, all null, with `bytes` zero bytes:
    /// the buffers a threaded batch is copied into, at their full size.
    fn sized(made: BatchValues, len: usize, bytes: usize) -> Batch {
        let shape = match made {
            BatchValues::Keys { large: true } => Shape::Keys(OffsetsOut::Large(vec![0; len + 1])),
            BatchValues::Keys { large: false } => Shape::Keys(OffsetsOut::Small(vec![0; len + 1])),
            BatchValues::Fingerprints => Shape::Fingerprints { key: Vec::new() },
        };
        Batch {
            shape,
            data: vec![0; bytes],
            validity: vec![0; len.div_ceil(8)],
            nulls: len,
            length: len,
            scratch: Scratches::default(),
            reasons: None,
        }
    }

    /// Makes the values of `range` of `rows` into this batch, in place of
    /// what it held (its buffers kept).
    fn fill(&mut self, maker: &KeyMaker<'_>, rows: &(impl Rows + ?Sized), range: Range<usize>) {
        self.clear();
        for i in range {
            self.push(maker, rows, i);
        }
    }

    /// Empties the batch (and its reasons), keeping its buffers.
    fn clear(&mut self) {
        self.data.clear();
        self.validity.clear();
        self.nulls = 0;
        self.length = 0;
        match &mut self.shape {
            Shape::Keys(OffsetsOut::Large(offsets)) => offsets.clear(),
            Shape::Keys(OffsetsOut::Small(offsets)) => offsets.clear(),
            Shape::Fingerprints { .. } => {}
        }
        self.push_offset();
        if let Some(reasons) = &mut self.reasons {
            reasons.clear();
        }
    }

    fn new(shape: Shape, capacity: usize, bytes: usize) -> Batch {
        let mut batch = Batch {
            shape,
            data: Vec::with_capacity(bytes),
            validity: Vec::with_capacity(capacity.div_ceil(8)),
            nulls: 0,
            length: 0,
            scratch: Scratches::default(),
            reasons: None,
        };
        batch.push_offset();
        batch
    }

    /// Appends the key of row `i` of `rows` (or its fingerprint), or a null.
    fn push(&mut self, maker: &KeyMaker<'_>, rows: &(impl Rows + ?Sized), i: usize) {
        let scratch = &mut self.scratch;
        let written = match &mut self.shape {
            // On error nothing is appended, so the value is an empty null.
            Shape::Keys(_) => rows.write(i, maker, &mut self.data, scratch),
            // A null of a fixed-size array still takes its 16 bytes.
            Shape::Fingerprints { key: made } => {
                made.clear();
                let written = rows.write(i, maker, made, scratch);
                let print = match written {
                    Some(Ok(())) => fingerprint(made),
                    _ => [0; 16],
                };
                self.data.extend_from_slice(&print);
                written
            }
        };
        if let Some(reasons) = &mut self.reasons {
            let reason = match &written {
                Some(Err(e)) => Some(rows.reason(i, maker, e)),
                _ => None,
            };
            reasons.push_text(reason.as_deref());
        }
        self.push_validity(matches!(written, Some(Ok(()))));
        self.push_offset();
    }

    /// Appends `text` as a value, or a null: a batch of reasons.
    fn push_text(&mut self, text: Option<&str>) {
        if let Some(text) = text {
            self.data.extend_from_slice(text.as_bytes());
        }
        self.push_validity(text.is_some());
        self.push_offset();
    }

    /// Counts one more value, valid or null.
    fn push_validity(&mut self, valid: bool) {
        if self.length % 8 == 0 {
            self.validity.push(0);
        }
        if valid {
            *self.validity.last_mut().expect("pushed above") |= 1 << (self.length % 8);
        } else {
            self.nulls += 1;
        }
        self.length += 1;
    }

    fn push_offset(&mut self) {
        let end = self.data.len();
        match &mut self.shape {
            Shape::Keys(OffsetsOut::Large(offsets)) => offsets.push(end as i64),
            // Past i32::MAX the batch is refused in `finish`; the offset
            // written meanwhile is never read.
            Shape::Keys(OffsetsOut::Small(offsets)) => {
                offsets.push(end.min(i32::MAX as usize) as i32)
            }
            Shape::Fingerprints { .. } => {}
        }
    }

    /// The finished array, and its reasons if asked for; unless 32-bit
    /// offsets overflowed.
    pub fn finish(mut self) -> Result<(Keys, Option<Keys>), TooLarge> {
        let small = matches!(self.shape, Shape::Keys(OffsetsOut::Small(_)));
        if small && self.data.len() > i32::MAX as usize {
            return Err(TooLarge);
        }
        let reasons = self.reasons.take().map(|reasons| Keys(*reasons));
        Ok((Keys(self), reasons))
    }
}

/// An Arrow offset, 32- or 64-bit.
trait Offset: Copy + Default + Send + Sync {
    /// This offset moved `by` bytes further into the data. Past i32::MAX a
    /// 32-bit offset saturates; the batch is then refused in `finish`.
    fn moved(self, by: usize) -> Self;
}

impl Offset for i32 {
    fn moved(self, by: usize) -> i32 {
        (self as usize + by).min(i32::MAX as usize) as i32
    }
}

impl Offset for i64 {
    fn moved(self, by: usize) -> i64 {
        self + by as i64
    }
}

/// A finished batch, which Python reads in place: pyarrow wraps each buffer
/// with `foreign_buffer(address, size, base=keys)`, which keeps this object
/// alive as long as the array, so the keys are never copied. Nothing
/// changes the buffers once the object exists.
#[pyclass(frozen, module = "urinorm._urinorm")]
pub struct Keys(Batch);

/// A buffer's address and size in bytes, as `foreign_buffer` takes them.
fn address<T>(buffer: &[T]) -> (usize, usize) {
    (buffer.as_ptr() as usize, std::mem::size_of_val(buffer))
}

#[pymethods]
impl Keys {
    /// The number of values.
    fn __len__(&self) -> usize {
        self.0.length
    }

    /// How many are null.
    #[getter]
    fn null_count(&self) -> usize {
        self.0.nulls
    }

    /// Whether the offsets are 64-bit (a `large_string` array).
    #[getter]
    fn large(&self) -> bool {
        matches!(self.0.shape, Shape::Keys(OffsetsOut::Large(_)))
    }

    /// Whether the values are 16-byte fingerprints (a `fixed_size_binary(16)`
    /// array, which has no offsets).
    #[getter]
    fn fingerprints(&self) -> bool {
        matches!(self.0.shape, Shape::Fingerprints { .. })
    }

    /// `(address, size)` of the validity bitmap.
    #[getter]
    fn validity(&self) -> (usize, usize) {
        address(&self.0.validity)
    }

    /// `(address, size)` of the offsets; `(0, 0)` for fingerprints.
    #[getter]
    fn offsets(&self) -> (usize, usize) {
        match &self.0.shape {
            Shape::Keys(OffsetsOut::Small(offsets)) => address(offsets),
            Shape::Keys(OffsetsOut::Large(offsets)) => address(offsets),
            Shape::Fingerprints { .. } => (0, 0),
        }
    }

    /// `(address, size)` of the bytes of the keys.
    #[getter]
    fn data(&self) -> (usize, usize) {
        address(&self.0.data)
    }
}
