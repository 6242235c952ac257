//! The extension's functions: their SQL names, arguments and return
//! types, each a set of two overloads (without and with options). It knows
//! DuckDB's type codes; nothing of URIs or options.

use std::ffi::CStr;

use libduckdb_sys::*;

/// The functions, each a set of two overloads: without and with options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Normalize,
    Surt,
    Fingerprint,
    Resolve,
}

impl Kind {
    pub(crate) const ALL: [Kind; 4] = [
        Kind::Normalize,
        Kind::Surt,
        Kind::Fingerprint,
        Kind::Resolve,
    ];

    pub(crate) fn name(self) -> &'static CStr {
        match self {
            Kind::Normalize => c"urinorm_normalize",
            Kind::Surt => c"urinorm_surt",
            Kind::Fingerprint => c"urinorm_fingerprint",
            Kind::Resolve => c"urinorm_resolve",
        }
    }

    pub(crate) fn text(self) -> &'static str {
        self.name().to_str().expect("ASCII names")
    }

    /// The URI arguments, before the options: the base and the reference
    /// for `urinorm_resolve`, the URL for the others.
    pub(crate) fn uris(self) -> usize {
        match self {
            Kind::Resolve => 2,
            _ => 1,
        }
    }

    pub(crate) fn returns(self) -> DUCKDB_TYPE {
        match self {
            Kind::Fingerprint => DUCKDB_TYPE_DUCKDB_TYPE_BLOB,
            _ => DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR,
        }
    }
}
