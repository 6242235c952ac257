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

// What a line means: which column, which key, which scope.
pub mod key;
pub mod mapper;
pub mod scope;
// Site rules: the rule languages behind the core's `SiteRewrite`.
pub mod rules;
// The bulk engine and its store.
pub mod cleanup;
pub mod memory;
pub mod os_error;
pub mod pipeline;
pub mod seen;
// The seen store served to many clients (`urinorm serve`), without HTTP.
pub mod serve;
// The ladder report (`urinorm ladder`; the ladder of rungs is `normalize`).
pub mod ladder_report;
// What a crawl index's lines say (CDX, CDXJ, a digest column), and which
// merges the digests say are right: the ladder on evidence.
pub mod crawl_index;
pub mod evidence;
// Site rules learned from a crawl index's digests (`urinorm rules learn`).
pub mod learn_rules;

/// The README's examples, run as doctests. (Its `console exit=1` blocks
/// are the CLI tests' to check, an attribute rustdoc does not know.)
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
#[allow(rustdoc::invalid_codeblock_attributes)]
pub struct ReadmeDoctests;
