//! urinorm's normalizer as a DuckDB loadable extension, through DuckDB's C
//! extension API (v1, `libduckdb-sys` with `loadable-extension`: no DuckDB
//! build, no link to libduckdb; DuckDB hands the entrypoint its function
//! table).
//!
//! - `urinorm_normalize(url VARCHAR) -> VARCHAR`: the canonical form by the
//!   default normalizer, what `urinorm.normalize_batch(values)` gives;
//! - `urinorm_normalize(url VARCHAR, options VARCHAR) -> VARCHAR`: the same
//!   with options, a constant string such as `'preset=aggressive'` or
//!   `'rung=protocol; with=a,b; without=c; key=surt; lenient=true'`, read
//!   once when the query is bound (a misspelt option fails the query then).
//!
//! Each is NULL where the input is NULL or is not a URI reference. DuckDB
//! calls the function on its own threads, a vector (2,048 rows) at a time;
//! the input strings are read where DuckDB keeps them, and each key is made
//! in a buffer of the calling thread and copied once into the output vector.

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::ptr;
use std::sync::Arc;

use libduckdb_sys::*;
use urinorm::key::KeyFormat;
use urinorm::mapper::{ColumnScratch, Columns};
use urinorm::normalize::protocol::{Preset, ProtocolOptions, Transform};
use urinorm::normalize::{Normalizer, Rung, Scratch};

/// The C API version asked for and written in the footer: the bind callback
/// (and its client context), and the unchecked string assignment are stable
/// from v1.5.6, the last v1 version (DuckDB 1.5.6 and 2.x load it).
pub const CAPI_VERSION: &str = "v1.5.6";

/// How a value becomes its key: the normalizer, which key, and whether the
/// value is repaired first (`lenient`).
struct Maker {
    normalizer: Normalizer,
    key: KeyFormat,
    columns: Columns,
}

impl Maker {
    /// Appends the key of `value` to `out`; false (nothing appended) when it
    /// is not a URI reference.
    fn write(&self, value: &[u8], out: &mut Vec<u8>, scratch: &mut Scratches) -> bool {
        let Scratches { normalize, columns } = scratch;
        let mut write = |uri: &[u8]| self.key.write(&self.normalizer, uri, out, normalize);
        if self.columns.is_plain() {
            return write(value).is_ok();
        }
        (self.columns)
            .with_reference(value, None, columns, write)
            .is_ok()
    }

    /// The default: `Normalizer::from_options(None, no options)`, the
    /// canonical form, the value as written (as `normalize_batch(values)`).
    fn default_maker() -> Maker {
        Maker::parse("").expect("the default options")
    }

    /// The options of `text`: `name=value` pairs separated by `;` (lists,
    /// as `with`, separated by `,`), the names of `normalize_batch`'s
    /// keyword arguments: `rung`, `preset`, `with` (or `with_`), `without`,
    /// `tracking_params`, `key`, `lenient`.
    fn parse(text: &str) -> Result<Maker, String> {
        let (mut rung, mut preset) = (None, None);
        let (mut with, mut without) = (Vec::new(), Vec::new());
        let mut tracking: Option<String> = None;
        let mut key = KeyFormat::Canonical;
        let mut lenient = false;
        let list = |value: &str| -> Vec<String> {
            (value.split(',').map(str::trim))
                .filter(|name| !name.is_empty())
                .map(String::from)
                .collect()
        };
        let transforms = |value: &str| -> Result<Vec<Transform>, String> {
            list(value).iter().map(|n| n.parse::<Transform>()).collect()
        };
        for pair in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, value)) = pair.split_once('=') else {
                return Err(format!("urinorm_normalize: an option is name=value, not '{pair}'"));
            };
            let value = value.trim();
            match name.trim() {
                "rung" => rung = Some(value.parse::<Rung>()?),
                "preset" => preset = Some(value.parse::<Preset>()?),
                "with" | "with_" => with.extend(transforms(value)?),
                "without" => without.extend(transforms(value)?),
                // The command line reads a file of one name per line.
                "tracking_params" => tracking = Some(list(value).join("\n")),
                "key" => key = value.parse::<KeyFormat>()?,
                "lenient" => {
                    lenient = match value {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(format!("urinorm_normalize: lenient is true or false, not '{value}'")),
                    }
                }
                other => {
                    return Err(format!(
                        "urinorm_normalize: unknown option '{other}' (rung, preset, with, without, tracking_params, key, lenient)"
                    ));
                }
            }
        }
        let options = ProtocolOptions {
            preset,
            with: &with,
            without: &without,
            tracking_list: tracking.as_deref(),
            rules: None,
        };
        let normalizer = Normalizer::from_options(rung, &options).map_err(|e| e.to_string())?;
        let columns = Columns {
            lenient,
            ..Columns::default()
        };
        Ok(Maker {
            normalizer,
            key,
            columns,
        })
    }
}

/// The buffers a thread reuses from row to row.
#[derive(Default)]
struct Scratches {
    normalize: Scratch,
    columns: ColumnScratch,
}

thread_local! {
    /// The key being made, and the scratch: one per DuckDB thread.
    static BUFFERS: RefCell<(Vec<u8>, Scratches)> = RefCell::new((Vec::with_capacity(256), Scratches::default()));
}

/// The bytes of a `duckdb_string_t`, where DuckDB keeps them: up to 12
/// bytes inline in the 16-byte struct, past that behind its pointer.
///
/// # Safety
/// `s` is a valid string of a vector that outlives the returned slice.
#[inline]
unsafe fn string_bytes(s: &duckdb_string_t) -> &[u8] {
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

/// Writes into `output` the key of each row of the first column of
/// `input`, or NULL.
unsafe fn run(maker: &Maker, input: duckdb_data_chunk, output: duckdb_vector) {
    unsafe {
        let rows = duckdb_data_chunk_get_size(input) as usize;
        // DuckDB flattens the input before calling a C API function.
        let urls = duckdb_data_chunk_get_vector(input, 0);
        let values = duckdb_vector_get_data(urls).cast::<duckdb_string_t>();
        let validity = duckdb_vector_get_validity(urls);
        let mut out_validity: *mut u64 = ptr::null_mut();
        // The validity masks are read and written in place (a bit a row,
        // least significant first, in u64 words), not through the API's
        // function table, which costs an indirect call a row.
        let mut set_null = |row: usize| {
            if out_validity.is_null() {
                duckdb_vector_ensure_validity_writable(output);
                out_validity = duckdb_vector_get_validity(output);
            }
            *out_validity.add(row / 64) &= !(1u64 << (row % 64));
        };
        let is_null = |row: usize| !validity.is_null() && *validity.add(row / 64) & (1u64 << (row % 64)) == 0;
        BUFFERS.with_borrow_mut(|(key, scratch)| {
            for row in 0..rows {
                if is_null(row) {
                    set_null(row);
                    continue;
                }
                let value = string_bytes(&*values.add(row));
                key.clear();
                // A key is ASCII but for a host or path the normalizer keeps
                // as UTF-8; DuckDB's VARCHAR must be valid UTF-8, which the
                // unchecked assignment does not check.
                let made = maker.write(value, key, scratch)
                    && (key.is_ascii() || std::str::from_utf8(key).is_ok());
                if made {
                    let data = key.as_ptr().cast::<c_char>();
                    duckdb_unsafe_vector_assign_string_element_len(output, row as idx_t, data, key.len() as idx_t);
                } else {
                    set_null(row);
                }
            }
        });
    }
}

/// `urinorm_normalize(url)`: the maker is the function's extra info.
unsafe extern "C" fn normalize_default(info: duckdb_function_info, input: duckdb_data_chunk, output: duckdb_vector) {
    unsafe {
        let maker = &*duckdb_scalar_function_get_extra_info(info).cast::<Maker>();
        run(maker, input, output);
    }
}

/// `urinorm_normalize(url, options)`: the maker is the bind data.
unsafe extern "C" fn normalize_options(info: duckdb_function_info, input: duckdb_data_chunk, output: duckdb_vector) {
    unsafe {
        let maker = duckdb_scalar_function_get_bind_data(info).cast::<Arc<Maker>>();
        if maker.is_null() {
            duckdb_scalar_function_set_error(info, c"urinorm_normalize: options not bound".as_ptr());
            return;
        }
        run(&*maker, input, output);
    }
}

unsafe extern "C" fn drop_maker(data: *mut c_void) {
    drop(unsafe { Box::from_raw(data.cast::<Maker>()) });
}

unsafe extern "C" fn drop_bound(data: *mut c_void) {
    drop(unsafe { Box::from_raw(data.cast::<Arc<Maker>>()) });
}

/// DuckDB copies bind data with the expression (the optimizer does): the
/// copy shares the maker.
unsafe extern "C" fn copy_bound(data: *mut c_void) -> *mut c_void {
    let maker = unsafe { &*data.cast::<Arc<Maker>>() };
    Box::into_raw(Box::new(Arc::clone(maker))).cast()
}

/// Reads the options argument, which must be a constant, and makes the
/// maker once for the query.
unsafe extern "C" fn bind_options(info: duckdb_bind_info) {
    unsafe {
        match bound_options(info) {
            Ok(maker) => {
                let data = Box::into_raw(Box::new(Arc::new(maker))).cast();
                duckdb_scalar_function_set_bind_data(info, data, Some(drop_bound));
                duckdb_scalar_function_set_bind_data_copy(info, Some(copy_bound));
            }
            Err(e) => {
                let e = CString::new(e.replace('\0', " ")).expect("no NUL");
                duckdb_scalar_function_bind_set_error(info, e.as_ptr());
            }
        }
    }
}

unsafe fn bound_options(info: duckdb_bind_info) -> Result<Maker, String> {
    unsafe {
        let mut expr = duckdb_scalar_function_bind_get_argument(info, 1);
        if expr.is_null() {
            return Err("urinorm_normalize: no options argument".into());
        }
        let mut context: duckdb_client_context = ptr::null_mut();
        let text = if !duckdb_expression_is_foldable(expr) {
            Err("urinorm_normalize: the options must be a constant string".to_string())
        } else {
            duckdb_scalar_function_get_client_context(info, &mut context);
            let mut value: duckdb_value = ptr::null_mut();
            let mut error = duckdb_expression_fold(context, expr, &mut value);
            let text = if !error.is_null() {
                let message = CStr::from_ptr(duckdb_error_data_message(error)).to_string_lossy().into_owned();
                duckdb_destroy_error_data(&mut error);
                Err(format!("urinorm_normalize: options: {message}"))
            } else if duckdb_is_null_value(value) {
                Ok(String::new())
            } else {
                let chars = duckdb_get_varchar(value);
                let text = CStr::from_ptr(chars).to_string_lossy().into_owned();
                duckdb_free(chars.cast());
                Ok(text)
            };
            if !value.is_null() {
                duckdb_destroy_value(&mut value);
            }
            duckdb_destroy_client_context(&mut context);
            text
        };
        duckdb_destroy_expression(&mut expr);
        Maker::parse(&text?)
    }
}

/// One overload of `urinorm_normalize`, `VARCHAR`s in, `VARCHAR` out.
unsafe fn overload(arguments: usize) -> duckdb_scalar_function {
    unsafe {
        let function = duckdb_create_scalar_function();
        duckdb_scalar_function_set_name(function, c"urinorm_normalize".as_ptr());
        let mut varchar = duckdb_create_logical_type(DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        for _ in 0..arguments {
            duckdb_scalar_function_add_parameter(function, varchar);
        }
        duckdb_scalar_function_set_return_type(function, varchar);
        duckdb_destroy_logical_type(&mut varchar);
        function
    }
}

/// Registers the functions on `con`.
unsafe fn register(con: duckdb_connection) -> Result<(), String> {
    unsafe {
        let mut set = duckdb_create_scalar_function_set(c"urinorm_normalize".as_ptr());

        let mut one = overload(1);
        // NULLs are the function's: it sets them itself, and so makes NULL
        // of an input that is not a URI reference.
        duckdb_scalar_function_set_special_handling(one);
        let maker = Box::into_raw(Box::new(Maker::default_maker()));
        duckdb_scalar_function_set_extra_info(one, maker.cast(), Some(drop_maker));
        duckdb_scalar_function_set_function(one, Some(normalize_default));

        let mut two = overload(2);
        duckdb_scalar_function_set_special_handling(two);
        duckdb_scalar_function_set_bind(two, Some(bind_options));
        duckdb_scalar_function_set_function(two, Some(normalize_options));

        let added = duckdb_add_scalar_function_to_set(set, one) == DuckDBSuccess
            && duckdb_add_scalar_function_to_set(set, two) == DuckDBSuccess;
        let registered = added && duckdb_register_scalar_function_set(con, set) == DuckDBSuccess;
        duckdb_destroy_scalar_function(&mut one);
        duckdb_destroy_scalar_function(&mut two);
        duckdb_destroy_scalar_function_set(&mut set);
        match registered {
            true => Ok(()),
            false => Err("urinorm: could not register urinorm_normalize".into()),
        }
    }
}

/// The entrypoint DuckDB looks up for a C API (v1) extension: the file's
/// base name (`urinorm`) then `_init_c_api`. True when loaded; else the
/// error is set on `info`.
///
/// # Safety
/// Called by DuckDB only, with the load's `info` and `access`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn urinorm_init_c_api(
    info: duckdb_extension_info,
    access: *const duckdb_extension_access,
) -> bool {
    unsafe {
        let fail = |message: &str| {
            let message = CString::new(message).expect("no NUL");
            if let Some(set_error) = (*access).set_error {
                set_error(info, message.as_ptr());
            }
            false
        };
        match duckdb_rs_extension_api_init(info, access, CAPI_VERSION) {
            Ok(true) => {}
            // DuckDB refused the version and said why on `info`.
            Ok(false) => return false,
            Err(e) => return fail(e),
        }
        let Some(get_database) = (*access).get_database else {
            return fail("urinorm: no database to load into");
        };
        let database = get_database(info);
        if database.is_null() {
            return false;
        }
        let mut con: duckdb_connection = ptr::null_mut();
        if duckdb_connect(*database, &mut con) != DuckDBSuccess {
            return fail("urinorm: could not connect to the database");
        }
        let registered = register(con);
        duckdb_disconnect(&mut con);
        match registered {
            Ok(()) => true,
            Err(e) => fail(&e),
        }
    }
}
