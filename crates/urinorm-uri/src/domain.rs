//! Hosts and the sites they belong to: the registrable domain (eTLD+1) of a
//! host by the Public Suffix List, ICANN and private sections (so
//! `foo.blogspot.com` and `bar.blogspot.com` are two sites), as
//! crawler-commons, cc-index's `registered_domain` and tldextract use it.
//!
//! The list is the `psl` crate's: the list compiled to code, republished by
//! its maintainers whenever the upstream list changes, so looking a host up
//! costs no allocation and no table built at start-up ([`PSL_VERSION`]
//! names the one built in). A newer `public_suffix_list.dat` can be read at
//! run time instead ([`SuffixList::parse`], by the `publicsuffix` crate of
//! the same authors, over the same rules) and put in force for the process
//! ([`install`]) before any lookup.
//!
//! It knows host names and the list; not URIs.

use std::sync::OnceLock;

use psl::Psl;

/// The version of the list built in, as a literal (for `concat!`): the
/// `psl` crate's, which its maintainers publish anew with each change of
/// the upstream list. Pinned in Cargo.toml; a test checks that Cargo.lock
/// agrees.
#[macro_export]
macro_rules! psl_version {
    () => {
        "2.1.247"
    };
}

/// The version of the list built in (see [`psl_version!`]).
pub const PSL_VERSION: &str = psl_version!();

/// A Public Suffix List.
pub enum SuffixList {
    /// The list built in ([`PSL_VERSION`]).
    BuiltIn,
    /// A list read at run time, and the fingerprint of its text.
    Read(Box<publicsuffix::List>, String),
}

static IN_FORCE: OnceLock<SuffixList> = OnceLock::new();

/// Puts `list` in force for the process; refused (the list given back)
/// once a list is in force, which the first lookup makes the built-in one.
pub fn install(list: SuffixList) -> Result<(), SuffixList> {
    IN_FORCE.set(list)
}

/// The list in force.
pub fn suffix_list() -> &'static SuffixList {
    IN_FORCE.get_or_init(|| SuffixList::BuiltIn)
}

impl SuffixList {
    /// A list from the text of a `public_suffix_list.dat`.
    pub fn parse(text: &str) -> Result<SuffixList, String> {
        let list: publicsuffix::List = text
            .parse()
            .map_err(|e| format!("not a Public Suffix List: {e}"))?;
        if list.is_empty() {
            return Err("not a Public Suffix List: it has no rules".into());
        }
        let print = crate::fingerprint::fingerprint(text.as_bytes());
        let hex: String = print[..8].iter().map(|b| format!("{b:02x}")).collect();
        Ok(SuffixList::Read(Box::new(list), hex))
    }

    /// Which list, in a few words (for records of how keys were made).
    pub fn describe(&self) -> String {
        match self {
            SuffixList::BuiltIn => format!("built-in (psl {PSL_VERSION})"),
            SuffixList::Read(_, print) => format!("read from a file, fingerprint {print}"),
        }
    }

    /// The registrable domain of the domain name `host` (lowercase, as a
    /// canonical form has it): its public suffix and one more label; `None`
    /// when `host` is itself a public suffix, or no domain name.
    ///
    /// ```
    /// use urinorm_uri::domain::SuffixList;
    /// let list = SuffixList::BuiltIn;
    /// assert_eq!(list.registrable_domain(b"www.bbc.co.uk"), Some(&b"bbc.co.uk"[..]));
    /// assert_eq!(list.registrable_domain(b"foo.blogspot.com"), Some(&b"foo.blogspot.com"[..]));
    /// assert_eq!(list.registrable_domain(b"co.uk"), None);
    /// ```
    pub fn registrable_domain<'h>(&self, host: &'h [u8]) -> Option<&'h [u8]> {
        let domain = match self {
            SuffixList::BuiltIn => psl::List.domain(host),
            SuffixList::Read(list, _) => list.domain(host),
        }?;
        let len = domain.as_bytes().len();
        // The domain is the end of the host.
        Some(&host[host.len() - len..])
    }
}

/// Whether a host name's last label reads as a number (decimal, or `0x`
/// hex), as the WHATWG URL parser's "ends in a number" test has it: such a
/// name is taken for an IPv4 address by browsers, so no rule may leave one.
pub fn ends_in_number(host: &[u8]) -> bool {
    let host = host.strip_suffix(b".").unwrap_or(host);
    let last = host.rsplit(|&b| b == b'.').next().unwrap_or_default();
    match last
        .strip_prefix(b"0x")
        .or_else(|| last.strip_prefix(b"0X"))
    {
        Some(hex) => hex.iter().all(u8::is_ascii_hexdigit),
        None => !last.is_empty() && last.iter().all(u8::is_ascii_digit),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the copy of the maintainers' file in ../shared departs from
    /// the maintainers' own (publicsuffix/list tests/test_psl.txt, and its
    /// ports in PHP, JavaScript, Python and R all say `city.kobe.jp`): the
    /// exception rule `!city.kobe.jp` makes `kobe.jp` the public suffix of
    /// `city.kobe.jp`, so the registrable domain is `city.kobe.jp` itself.
    /// (host, what the copy says, what the list means)
    const ERRATA: [(&str, &str, &str); 2] = [
        ("city.kobe.jp", "kobe.jp", "city.kobe.jp"),
        ("www.city.kobe.jp", "kobe.jp", "city.kobe.jp"),
    ];

    /// The list's maintainers' own cases (`checkPublicSuffix(host,
    /// registrable)` in ../shared/corpora/conformance/psl/test_psl.txt),
    /// for the hosts a canonical form can have: lowercase, no leading dot
    /// (those cases are checked as the canonical form's lowercasing makes
    /// them), ASCII (the IDN cases are checked in their punycode form, which
    /// the file also lists).
    #[test]
    fn the_psl_maintainers_cases() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/corpora/conformance/psl/test_psl.txt"
        );
        let text = std::fs::read_to_string(path).expect("the PSL test file in ../shared");
        let (mut checked, mut skipped) = (0, Vec::new());
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("checkPublicSuffix("))
        {
            let args = &line["checkPublicSuffix(".len()..line.len() - 2];
            let (host, expected) = args.split_once(", ").expect("two arguments");
            let unquote = |s: &str| (s != "null").then(|| s.trim_matches('\'').to_string());
            let (Some(host), expected) = (unquote(host), unquote(expected)) else {
                skipped.push(line.to_string());
                continue;
            };
            if host.starts_with('.') || !host.is_ascii() {
                skipped.push(line.to_string());
                continue;
            }
            let host = host.to_ascii_lowercase();
            let got = SuffixList::BuiltIn.registrable_domain(host.as_bytes());
            let got = got.map(|d| String::from_utf8(d.to_vec()).unwrap());
            let expected = match ERRATA.iter().find(|(h, _, _)| *h == host) {
                Some(&(_, copy, upstream)) => {
                    assert_eq!(
                        expected.as_deref(),
                        Some(copy),
                        "{line}: the copy was corrected"
                    );
                    Some(upstream.to_string())
                }
                None => expected.map(|e| e.to_ascii_lowercase()),
            };
            assert_eq!(got, expected, "{line}");
            checked += 1;
        }
        assert_eq!(checked, 64, "cases checked");
        // What is left out, and why, is counted too: a null host, leading
        // dots (no canonical host has one), and non-ASCII hosts (a
        // canonical form holds their punycode, checked above).
        assert_eq!(skipped.len(), 14, "{skipped:#?}");
    }

    #[test]
    fn the_version_named_is_the_one_built_in() {
        let lock = include_str!("../../../Cargo.lock");
        let entry = format!("name = \"psl\"\nversion = \"{PSL_VERSION}\"");
        assert!(
            lock.contains(&entry),
            "Cargo.lock's psl is not {PSL_VERSION}"
        );
    }

    #[test]
    fn a_list_read_at_run_time_is_used_as_read() {
        let text = "// ===BEGIN ICANN DOMAINS===\ncom\nuk\nco.uk\n// ===END ICANN DOMAINS===\n";
        let list = SuffixList::parse(text).unwrap();
        assert_eq!(list.registrable_domain(b"a.b.co.uk"), Some(&b"b.co.uk"[..]));
        assert!(list.describe().starts_with("read from a file"));
        assert!(SuffixList::parse("").is_err());
    }

    #[test]
    fn names_that_read_as_numbers() {
        // `0x` alone is the number 0 to the WHATWG parser.
        for host in ["1.2.3", "a.0x1f", "example.123", "1.2.3.", "0x"] {
            assert!(ends_in_number(host.as_bytes()), "{host}");
        }
        for host in ["example.com", "1.2.3a", "a.0xz", ""] {
            assert!(!ends_in_number(host.as_bytes()), "{host}");
        }
    }
}
