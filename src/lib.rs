//! # urinorm
//!
//! Normalize and deduplicate URIs in bulk, to the letter of RFC 3986.
//!
//! The library is a zero-copy parser for RFC 3986 URI references, reference
//! resolution (§5.2) and the normalizers of the comparison ladder (the core,
//! crate `urinorm-uri`, re-exported here), and the bulk engine the
//! `urinorm` command runs on: lines and keys, site rules, the pipeline, the
//! seen store and the ladder report.
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

// The core: one reference at a time (its own crate, `urinorm-uri`,
// re-exported whole so that `urinorm::normalize` and the rest keep their
// paths).
pub use urinorm_uri::psl_version;
pub use urinorm_uri::{
    ErrorKind, HostKind, InvalidUri, UriRef, domain, error, escape, fingerprint, host, lenient,
    normalize, resolve, scratch, split, surt, table, uri,
};

// What a line means: which column, which key, which scope, what a crawl
// index's line says.
pub mod line;
// Site rules: the rule languages behind the core's `SiteRewrite`.
pub mod rules;
// The bulk engine: lines through threads, files and the store.
pub mod pipeline;
// The seen store: a crawl frontier's keys on disk.
pub mod store;
// The seen store served to many clients (`urinorm serve`), without HTTP.
pub mod service;
// What a crawl index's evidence says: the ladder report, rules learned.
pub mod report;
// The operating system's side: temporary files, memory, error reasons.
pub mod sys;

/// The README's examples, run as doctests. (Its `console exit=1` blocks
/// are the CLI tests' to check, an attribute rustdoc does not know.)
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[allow(rustdoc::invalid_codeblock_attributes)]
pub struct ReadmeDoctests;

/// The book's chapter on the library (`docs/src/library.md`), its Rust
/// examples run as doctests. (`tests/it/cli/readme.rs` checks that no
/// other page of the book has a Rust example.)
#[cfg(doctest)]
#[doc = include_str!("../docs/src/library.md")]
#[allow(rustdoc::invalid_codeblock_attributes)]
pub struct LibraryDoctests;
