//! The operating system's side of a run: the files a run removes when it
//! stops ([`cleanup`]), the memory it hands back ([`memory`]) and the
//! sentences its OS errors become ([`os_error`]). It knows no URI, line or
//! store.

pub mod cleanup;
pub mod memory;
pub mod os_error;
