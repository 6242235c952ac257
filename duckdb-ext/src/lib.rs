//! urinorm's functions as a DuckDB loadable extension, through DuckDB's C
//! extension API (v1, `libduckdb-sys` with `loadable-extension`: no DuckDB
//! build, no link to libduckdb; DuckDB hands the entrypoint its function
//! table). The functions of `urinorm.duckdb.register`'s Python UDFs:
//!
//! - `urinorm_normalize(url VARCHAR[, options VARCHAR]) -> VARCHAR`: the
//!   canonical form (or the key `key=` names), as `normalize_batch` makes it;
//! - `urinorm_surt(url VARCHAR[, options VARCHAR]) -> VARCHAR`: its SURT key;
//! - `urinorm_fingerprint(url VARCHAR[, options VARCHAR]) -> BLOB`: the
//!   16-byte fingerprint of the key, as `fingerprint_batch` makes it;
//! - `urinorm_resolve(base VARCHAR, ref VARCHAR[, options VARCHAR]) ->
//!   VARCHAR`: `ref` resolved against `base`, then normalized, as
//!   `resolve_batch` does.
//!
//! The options are `name=value` pairs separated by `;`, the names of the
//! batch functions' keyword arguments: `'preset=aggressive'`, `'rung=syntax;
//! lenient=true'`, `'with=sort-query,drop-fragment; key=surt'`. A constant
//! is read once, when the query is bound (a misspelt option fails the query
//! then); options that vary from row to row are read where they change.
//!
//! Each function is NULL where an input is NULL or is not a URI reference
//! (or the base not an absolute URI). DuckDB calls a function on its own
//! threads, a vector (2,048 rows) at a time; the input strings are read
//! where DuckDB keeps them, and each key is made in a buffer of the calling
//! thread and copied once into the output vector.
//!
//! No panic crosses into DuckDB: every function DuckDB calls runs its body
//! under [`std::panic::catch_unwind`], and a panic becomes the query's error.

mod bound;
mod kind;
mod vectors;

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use libduckdb_sys::*;
use urinorm::fingerprint::fingerprint;
use urinorm::line::KeyScratch;

use bound::{BoundFunction, TEST_PANIC};
use kind::Kind;
use vectors::{Column, Inputs, Output};

/// The C API version asked for and written in the footer: the bind callback
/// (and its client context), and the unchecked string assignment are stable
/// from v1.5.6, the last v1 version (DuckDB 1.5.6 and 2.x load it).
pub const CAPI_VERSION: &str = "v1.5.6";

thread_local! {
    /// The key being made, and the scratch: one per DuckDB thread.
    static BUFFERS: RefCell<(Vec<u8>, KeyScratch)> = RefCell::new((Vec::with_capacity(256), KeyScratch::default()));
    /// The options last read from a column (not a constant) by this
    /// thread, and the maker they made.
    static LAST_OPTIONS: RefCell<Option<LastOptions>> = const { RefCell::new(None) };
}

/// Options read from a column: the function, their text, their maker.
type LastOptions = (Kind, Vec<u8>, Arc<BoundFunction>);

/// The message of a caught panic, for DuckDB's error.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = (payload.downcast_ref::<&str>().copied())
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("urinorm: internal error (a panic): {text}")
}

/// `message` as a C string (a NUL in it becomes a space).
fn c_message(message: &str) -> CString {
    CString::new(message.replace('\0', " ")).expect("no NUL left")
}

/// Writes rows `rows` of `inputs` into `output` by `maker`.
///
/// # Safety
/// `rows` lie within the chunk `inputs` and `output` belong to.
unsafe fn fill(
    maker: &BoundFunction,
    inputs: &Inputs,
    output: &mut Output,
    rows: std::ops::Range<usize>,
) {
    BUFFERS.with_borrow_mut(|(key, scratch)| {
        for row in rows {
            // SAFETY: `row` is within the chunk (the caller's contract).
            let (value, base) = unsafe {
                match inputs.bases {
                    Some(bases) => (inputs.urls.get(row), bases.get(row).map(Some)),
                    None => (inputs.urls.get(row), Some(None)),
                }
            };
            let (Some(value), Some(base)) = (value, base) else {
                // SAFETY: as above.
                unsafe { output.set_null(row) };
                continue;
            };
            key.clear();
            let made = maker.write(value, base, key, scratch);
            // SAFETY: as above. A key is ASCII but for a host or path the
            // normalizer keeps as UTF-8; DuckDB's VARCHAR must be valid
            // UTF-8, which the unchecked assignment does not check, so a
            // VARCHAR's bytes are checked here (a BLOB is any bytes).
            unsafe {
                match maker.kind {
                    _ if !made => output.set_null(row),
                    Kind::Fingerprint => output.set(row, &fingerprint(key)),
                    _ if key.is_ascii() || std::str::from_utf8(key).is_ok() => output.set(row, key),
                    _ => output.set_null(row),
                }
            }
        }
    });
}

/// Runs the function on a chunk: by `bound` (the function's extra info, or
/// the bind data of constant options), or else by the options column, read
/// where it changes.
///
/// # Safety
/// `input` and `output` are what DuckDB passed to a function of `kind`.
unsafe fn run(
    kind: Kind,
    bound: Option<&BoundFunction>,
    input: duckdb_data_chunk,
    output: duckdb_vector,
) -> Result<(), String> {
    // SAFETY: the chunk has `kind.uris()` VARCHAR columns, then the options
    // when there are any; every row index below is below its size.
    unsafe {
        let rows = duckdb_data_chunk_get_size(input) as usize;
        let inputs = match kind {
            Kind::Resolve => Inputs {
                bases: Some(Column::of(input, 0)),
                urls: Column::of(input, 1),
            },
            _ => Inputs {
                urls: Column::of(input, 0),
                bases: None,
            },
        };
        let mut output = Output::new(output);
        if let Some(maker) = bound {
            fill(maker, &inputs, &mut output, 0..rows);
            return Ok(());
        }
        // Options that are no constant: each run of rows with the same
        // options, by the maker they make (kept from chunk to chunk).
        let options = Column::of(input, kind.uris());
        let mut start = 0;
        while start < rows {
            let text = options.get(start).unwrap_or_default();
            let mut end = start + 1;
            while end < rows && options.get(end).unwrap_or_default() == text {
                end += 1;
            }
            let maker =
                LAST_OPTIONS.with_borrow_mut(|last| -> Result<Arc<BoundFunction>, String> {
                    if let Some((k, t, maker)) = last.as_ref()
                        && *k == kind
                        && t == text
                    {
                        return Ok(Arc::clone(maker));
                    }
                    let maker =
                        Arc::new(BoundFunction::parse(kind, &String::from_utf8_lossy(text))?);
                    *last = Some((kind, text.to_vec(), Arc::clone(&maker)));
                    Ok(maker)
                })?;
            fill(&maker, &inputs, &mut output, start..end);
            start = end;
        }
        Ok(())
    }
}

/// The function DuckDB calls a chunk at a time, for either overload: the
/// maker of the one without options is the function's extra info; of the
/// one with constant options, the bind data; else none.
///
/// # Safety
/// Called by DuckDB only, with a function registered by [`register`].
unsafe extern "C" fn call(
    info: duckdb_function_info,
    input: duckdb_data_chunk,
    output: duckdb_vector,
) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the extra info is the `Kind` given at registration; the
        // bind data, when there is any, an `Arc<BoundFunction>` set by
        // `bind_options`; both live as long as the function.
        unsafe {
            let extra = duckdb_scalar_function_get_extra_info(info).cast::<Extra>();
            let extra = &*extra;
            let bound = duckdb_scalar_function_get_bind_data(info).cast::<Arc<BoundFunction>>();
            let maker = match (&extra.maker, bound.is_null()) {
                (Some(maker), _) => Some(maker),
                (None, false) => Some(&**bound),
                (None, true) => None,
            };
            run(extra.kind, maker, input, output)
        }
    }));
    let error = match outcome {
        Ok(Ok(())) => return,
        Ok(Err(message)) => message,
        Err(payload) => panic_message(&*payload),
    };
    let message = c_message(&error);
    // SAFETY: `info` is the call's; DuckDB copies the message.
    unsafe { duckdb_scalar_function_set_error(info, message.as_ptr()) };
}

/// What a function carries: its kind, and for the overload without options
/// the default maker.
struct Extra {
    kind: Kind,
    maker: Option<BoundFunction>,
}

/// Frees a function's [`Extra`].
///
/// # Safety
/// `data` is a `Box<Extra>` given to DuckDB by [`overload`].
unsafe extern "C" fn drop_extra(data: *mut c_void) {
    // A panic in a destructor is not told: DuckDB has no error to set here.
    let _ = catch_unwind(|| {
        // SAFETY: the caller's contract; DuckDB calls this once.
        drop(unsafe { Box::from_raw(data.cast::<Extra>()) });
    });
}

/// Frees bind data.
///
/// # Safety
/// `data` is a `Box<Arc<BoundFunction>>` given to DuckDB by [`bind_options`] or
/// [`copy_bound`].
unsafe extern "C" fn drop_bound(data: *mut c_void) {
    let _ = catch_unwind(|| {
        // SAFETY: the caller's contract; DuckDB calls this once a copy.
        drop(unsafe { Box::from_raw(data.cast::<Arc<BoundFunction>>()) });
    });
}

/// DuckDB copies bind data with the expression (the optimizer does): the
/// copy shares the maker. NULL (no bind data: the options are then read
/// from the column) should it panic.
///
/// # Safety
/// `data` is a `Box<Arc<BoundFunction>>` given to DuckDB by [`bind_options`] or
/// [`copy_bound`].
unsafe extern "C" fn copy_bound(data: *mut c_void) -> *mut c_void {
    catch_unwind(|| {
        // SAFETY: the caller's contract: `data` is live bind data.
        let maker = unsafe { &*data.cast::<Arc<BoundFunction>>() };
        Box::into_raw(Box::new(Arc::clone(maker))).cast()
    })
    .unwrap_or(ptr::null_mut())
}

/// Reads a constant options argument, and makes the maker once for the
/// query. Options that are not a constant are left to the rows (no bind
/// data).
///
/// # Safety
/// Called by DuckDB only, binding a function registered by [`register`].
unsafe extern "C" fn bind_options(info: duckdb_bind_info) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `info` is the bind's; the extra info is an `Extra`.
        unsafe {
            let extra = &*duckdb_scalar_function_bind_get_extra_info(info).cast::<Extra>();
            bound_options(info, extra.kind)
        }
    }));
    let error = match outcome {
        Ok(Ok(None)) => return,
        Ok(Ok(Some(maker))) => {
            let data = Box::into_raw(Box::new(Arc::new(maker))).cast();
            // SAFETY: `info` is the bind's; DuckDB owns `data` from here
            // and frees it (and its copies) by `drop_bound`.
            unsafe {
                duckdb_scalar_function_set_bind_data(info, data, Some(drop_bound));
                duckdb_scalar_function_set_bind_data_copy(info, Some(copy_bound));
            }
            return;
        }
        Ok(Err(message)) => message,
        Err(payload) => panic_message(&*payload),
    };
    let message = c_message(&error);
    // SAFETY: `info` is the bind's; DuckDB copies the message.
    unsafe { duckdb_scalar_function_bind_set_error(info, message.as_ptr()) };
}

/// The maker of the options argument when it is a constant (NULL: the
/// default options); None when it is not.
///
/// # Safety
/// `info` is a bind's, of a function of `kind` with options.
unsafe fn bound_options(
    info: duckdb_bind_info,
    kind: Kind,
) -> Result<Option<BoundFunction>, String> {
    let function = kind.text();
    // SAFETY: the options are argument `kind.uris()`; each object made here
    // (expression, client context, value, error, string) is destroyed or
    // freed here, once.
    unsafe {
        let mut expr = duckdb_scalar_function_bind_get_argument(info, kind.uris() as idx_t);
        if expr.is_null() {
            return Err(format!("{function}: no options argument"));
        }
        let text = if !duckdb_expression_is_foldable(expr) {
            Ok(None)
        } else {
            let mut context: duckdb_client_context = ptr::null_mut();
            duckdb_scalar_function_get_client_context(info, &mut context);
            let mut value: duckdb_value = ptr::null_mut();
            let mut error = duckdb_expression_fold(context, expr, &mut value);
            let text = if !error.is_null() {
                let message = CStr::from_ptr(duckdb_error_data_message(error))
                    .to_string_lossy()
                    .into_owned();
                duckdb_destroy_error_data(&mut error);
                Err(format!("{function}: options: {message}"))
            } else if duckdb_is_null_value(value) {
                Ok(Some(String::new()))
            } else {
                let chars = duckdb_get_varchar(value);
                let text = CStr::from_ptr(chars).to_string_lossy().into_owned();
                duckdb_free(chars.cast());
                Ok(Some(text))
            };
            if !value.is_null() {
                duckdb_destroy_value(&mut value);
            }
            duckdb_destroy_client_context(&mut context);
            text
        };
        duckdb_destroy_expression(&mut expr);
        text?
            .map(|text| BoundFunction::parse(kind, &text))
            .transpose()
    }
}

/// One overload of `kind`: its URI arguments and `options` or not.
///
/// # Safety
/// DuckDB's function table is initialized.
unsafe fn overload(kind: Kind, options: bool) -> Result<duckdb_scalar_function, String> {
    let maker = match options {
        true => None,
        false => Some(BoundFunction::parse(kind, "")?),
    };
    let extra = Box::into_raw(Box::new(Extra { kind, maker }));
    // SAFETY: the function and the logical types are made and destroyed
    // here (the function by the caller); DuckDB owns `extra` from here and
    // frees it by `drop_extra`.
    unsafe {
        let function = duckdb_create_scalar_function();
        duckdb_scalar_function_set_name(function, kind.name().as_ptr());
        let mut varchar = duckdb_create_logical_type(DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        for _ in 0..kind.uris() + usize::from(options) {
            duckdb_scalar_function_add_parameter(function, varchar);
        }
        duckdb_destroy_logical_type(&mut varchar);
        let mut returns = duckdb_create_logical_type(kind.returns());
        duckdb_scalar_function_set_return_type(function, returns);
        duckdb_destroy_logical_type(&mut returns);
        // NULLs are the function's: it sets them itself, and so makes NULL
        // of an input that is not a URI reference.
        duckdb_scalar_function_set_special_handling(function);
        duckdb_scalar_function_set_extra_info(function, extra.cast(), Some(drop_extra));
        if options {
            duckdb_scalar_function_set_bind(function, Some(bind_options));
        }
        duckdb_scalar_function_set_function(function, Some(call));
        Ok(function)
    }
}

/// Registers the functions on `con`.
///
/// # Safety
/// DuckDB's function table is initialized; `con` is open.
unsafe fn register(con: duckdb_connection) -> Result<(), String> {
    for kind in Kind::ALL {
        // SAFETY: the set and its functions are made and destroyed here;
        // DuckDB copies what it registers.
        unsafe {
            let mut set = duckdb_create_scalar_function_set(kind.name().as_ptr());
            let mut added = true;
            for options in [false, true] {
                let mut function = match overload(kind, options) {
                    Ok(function) => function,
                    Err(e) => {
                        duckdb_destroy_scalar_function_set(&mut set);
                        return Err(e);
                    }
                };
                added &= duckdb_add_scalar_function_to_set(set, function) == DuckDBSuccess;
                duckdb_destroy_scalar_function(&mut function);
            }
            let registered =
                added && duckdb_register_scalar_function_set(con, set) == DuckDBSuccess;
            duckdb_destroy_scalar_function_set(&mut set);
            if !registered {
                return Err(format!("urinorm: could not register {}", kind.text()));
            }
        }
    }
    Ok(())
}

/// Loads the extension: takes DuckDB's function table and registers the
/// functions.
///
/// # Safety
/// `info` and `access` are the load's.
unsafe fn init(
    info: duckdb_extension_info,
    access: *const duckdb_extension_access,
) -> Result<bool, String> {
    TEST_PANIC.store(
        std::env::var_os("URINORM_DUCKDB_TEST_PANIC").is_some(),
        Ordering::Relaxed,
    );
    // SAFETY: the caller's contract; the connection is made and closed here.
    unsafe {
        match duckdb_rs_extension_api_init(info, access, CAPI_VERSION) {
            Ok(true) => {}
            // DuckDB refused the version and said why on `info`.
            Ok(false) => return Ok(false),
            Err(e) => return Err(e.to_string()),
        }
        let get_database = (*access)
            .get_database
            .ok_or("urinorm: no database to load into")?;
        let database = get_database(info);
        if database.is_null() {
            return Ok(false);
        }
        let mut con: duckdb_connection = ptr::null_mut();
        if duckdb_connect(*database, &mut con) != DuckDBSuccess {
            return Err("urinorm: could not connect to the database".into());
        }
        let registered = register(con);
        duckdb_disconnect(&mut con);
        registered.map(|()| true)
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
    // SAFETY: the caller's contract.
    let outcome = catch_unwind(|| unsafe { init(info, access) });
    let error = match outcome {
        Ok(Ok(loaded)) => return loaded,
        Ok(Err(message)) => message,
        Err(payload) => panic_message(&*payload),
    };
    let message = c_message(&error);
    // SAFETY: `access` is DuckDB's; it copies the message.
    unsafe {
        if let Some(set_error) = (*access).set_error {
            set_error(info, message.as_ptr());
        }
    }
    false
}
