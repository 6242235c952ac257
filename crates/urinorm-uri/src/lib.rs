//! # urinorm-uri
//!
//! The core of urinorm: a zero-copy parser for RFC 3986 URI references,
//! reference resolution (§5.2), and the normalizers of the comparison
//! ladder (§6.2), with the byte tables and byte tools they run on. It
//! knows one reference at a time: no files, no threads, no rule files (the
//! `urinorm` crate builds its bulk engine, its site rules and its command
//! line on this one, and re-exports every module here).
//!
//! Parsing borrows the input and keeps an undefined component apart from an
//! empty one:
//!
//! ```
//! use urinorm_uri::{HostKind, UriRef};
//!
//! let uri = UriRef::parse("http://[::1]:8080/a/b?")?;
//! assert_eq!(uri.host_kind(), Some(HostKind::Ipv6([0, 0, 0, 0, 0, 0, 0, 1])));
//! assert_eq!(uri.port(), Some("8080"));
//! assert_eq!(uri.query(), Some(""));
//! assert_eq!(uri.fragment(), None);
//! # Ok::<(), urinorm_uri::InvalidUri>(())
//! ```
//!
//! An invalid reference says where and why:
//!
//! ```
//! let err = urinorm_uri::UriRef::parse("http://exa mple.com/").unwrap_err();
//! assert_eq!(err.to_string(), "space is not allowed in a URI at byte 10");
//! ```
//!
//! Resolution follows §5.2.2 exactly:
//!
//! ```
//! assert_eq!(urinorm_uri::resolve::resolve("http://a/b/c/d;p?q", "../../g")?, "http://a/g");
//! # Ok::<(), urinorm_uri::InvalidUri>(())
//! ```

pub mod domain;
pub mod error;
pub mod escape;
pub mod fingerprint;
pub mod host;
pub mod lenient;
pub mod normalize;
mod offsets;
mod parse;
pub mod resolve;
pub mod scratch;
mod simd;
pub mod split;
pub mod surt;
mod swar;
pub mod table;
pub mod uri;

pub use error::{ErrorKind, InvalidUri};
pub use uri::{HostKind, UriRef};
