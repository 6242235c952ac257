//! # urinorm
//!
//! Normalize and deduplicate URIs in bulk, to the letter of RFC 3986.
//!
//! The library is a zero-copy parser for RFC 3986 URI references, reference
//! resolution (§5.2), and the bulk engine the `urinorm` command runs on.
//!
//! Parsing borrows the input and keeps an undefined component apart from an
//! empty one:
//!
//! ```
//! use urinorm::{HostKind, UriRef};
//!
//! let uri = UriRef::parse("http://[::1]:8080/a/b?")?;
//! assert_eq!(uri.host_kind(), Some(HostKind::Ipv6([0, 0, 0, 0, 0, 0, 0, 1])));
//! assert_eq!(uri.port(), Some("8080"));
//! assert_eq!(uri.query(), Some(""));
//! assert_eq!(uri.fragment(), None);
//! # Ok::<(), urinorm::InvalidUri>(())
//! ```
//!
//! An invalid reference says where and why:
//!
//! ```
//! let err = urinorm::UriRef::parse("http://exa mple.com/").unwrap_err();
//! assert_eq!(err.to_string(), "space is not allowed in a URI at byte 10");
//! ```
//!
//! Resolution follows §5.2.2 exactly:
//!
//! ```
//! assert_eq!(urinorm::resolve::resolve("http://a/b/c/d;p?q", "../../g")?, "http://a/g");
//! # Ok::<(), urinorm::InvalidUri>(())
//! ```

pub mod cleanup;
pub mod domain;
pub mod error;
pub mod escape;
pub mod fingerprint;
pub mod host;
pub mod key;
pub mod ladder;
pub mod lenient;
pub mod mapper;
pub mod normalize;
mod offsets;
mod parse;
pub mod pipeline;
pub mod resolve;
pub mod rules;
pub mod scope;
pub mod scratch;
pub mod seen;
mod simd;
pub mod split;
pub mod surt;
mod swar;
pub mod table;
pub mod uri;

pub use error::{ErrorKind, InvalidUri};

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
pub use uri::{HostKind, UriRef};
