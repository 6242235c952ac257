//! DuckDB's vectors as the functions read and write them: an input column's
//! strings and validity mask, where DuckDB keeps them, and the output
//! vector. It knows DuckDB's memory layout; nothing of URIs.

use std::ffi::c_char;

use libduckdb_sys::*;

/// One input column of a flat vector: its strings and validity mask.
#[derive(Clone, Copy)]
pub(crate) struct Column {
    values: *const duckdb_string_t,
    validity: *const u64,
}

impl Column {
    /// Column `index` of `chunk`.
    ///
    /// # Safety
    /// `chunk` is the data chunk DuckDB passed to the function, and it has
    /// a VARCHAR column `index`.
    pub(crate) unsafe fn of(chunk: duckdb_data_chunk, index: usize) -> Column {
        // SAFETY: the caller's contract; DuckDB flattens the input vectors
        // before it calls a C API function, so the data is one
        // duckdb_string_t a row and the validity (NULL when all are valid)
        // one bit a row.
        unsafe {
            let vector = duckdb_data_chunk_get_vector(chunk, index as idx_t);
            Column {
                values: duckdb_vector_get_data(vector).cast_const().cast(),
                validity: duckdb_vector_get_validity(vector).cast_const(),
            }
        }
    }

    /// Row `row`'s bytes, or None for NULL.
    ///
    /// # Safety
    /// `row` is below the chunk's size; the slice lives no longer than the
    /// chunk.
    #[inline]
    pub(crate) unsafe fn get<'a>(self, row: usize) -> Option<&'a [u8]> {
        // SAFETY: the mask has a bit for each row of the chunk (a u64 per
        // 64 rows, least significant bit first), and `values` a string.
        unsafe {
            let valid =
                self.validity.is_null() || *self.validity.add(row / 64) & (1u64 << (row % 64)) != 0;
            valid.then(|| string_bytes(&*self.values.add(row)))
        }
    }
}

/// The bytes of a `duckdb_string_t`, where DuckDB keeps them: up to 12
/// bytes inline in the 16-byte struct, past that behind its pointer.
///
/// # Safety
/// `s` is a valid string of a vector that outlives the returned slice.
#[inline]
unsafe fn string_bytes<'a>(s: &duckdb_string_t) -> &'a [u8] {
    // SAFETY: the length field is in the same place in both variants of
    // the union; DuckDB inlines strings of 12 bytes or fewer and points to
    // the others, `len` bytes valid while the vector lives.
    unsafe {
        let len = s.value.inlined.length as usize;
        let data = if len <= 12 {
            s.value.inlined.inlined.as_ptr()
        } else {
            s.value.pointer.ptr.cast_const()
        };
        std::slice::from_raw_parts(data.cast::<u8>(), len)
    }
}

/// The output vector: its strings set through the API, its validity mask
/// written in place (made writable at the first NULL).
pub(crate) struct Output {
    vector: duckdb_vector,
    validity: *mut u64,
}

impl Output {
    /// The function's output vector, its mask made writable at the first NULL.
    pub(crate) fn new(vector: duckdb_vector) -> Output {
        Output {
            vector,
            validity: std::ptr::null_mut(),
        }
    }

    /// # Safety
    /// `row` is below the chunk's size.
    #[inline]
    pub(crate) unsafe fn set_null(&mut self, row: usize) {
        // SAFETY: `vector` is the function's output; once made writable its
        // mask has a bit for each row.
        unsafe {
            if self.validity.is_null() {
                duckdb_vector_ensure_validity_writable(self.vector);
                self.validity = duckdb_vector_get_validity(self.vector);
            }
            *self.validity.add(row / 64) &= !(1u64 << (row % 64));
        }
    }

    /// # Safety
    /// `row` is below the chunk's size; a VARCHAR's `bytes` are UTF-8.
    #[inline]
    pub(crate) unsafe fn set(&mut self, row: usize, bytes: &[u8]) {
        // SAFETY: DuckDB copies the bytes into the vector's own storage
        // (the unchecked assignment skips only the UTF-8 check, done by the
        // caller for a VARCHAR; a BLOB is any bytes).
        unsafe {
            let data = bytes.as_ptr().cast::<c_char>();
            duckdb_unsafe_vector_assign_string_element_len(
                self.vector,
                row as idx_t,
                data,
                bytes.len() as idx_t,
            );
        }
    }
}

/// The URI columns of a chunk: the URL (or the reference) and, for
/// `urinorm_resolve`, the base.
pub(crate) struct Inputs {
    pub(crate) urls: Column,
    pub(crate) bases: Option<Column>,
}
