//! What a URI's key is, the bytes lines are compared and written by: its
//! canonical form at a rung, that form as a SURT ([`crate::surt`]), or its
//! site ([`Site`]: the host, or the registrable domain by the Public Suffix
//! List), which is also what per-site caps count by.

use std::str::FromStr;

use crate::normalize::{Changes, Normalizer, Scratch};
use crate::pipeline::{Fault, Rejection};
use crate::surt::normalize_surt_into;
use crate::uri::SchemeHost;

/// The kind of key.
///
/// ```
/// use urinorm::line::key::KeyFormat;
/// use urinorm::normalize::{Normalizer, Rung, Scratch};
/// let (mut out, mut scratch) = (Vec::new(), Scratch::default());
/// let key: KeyFormat = "surt".parse()?;
/// let scheme = Normalizer::new(Rung::Scheme);
/// key.write(&scheme, b"http://WWW.Example.com/a", &mut out, &mut scratch)?;
/// assert_eq!(out, b"com,example,www)/a");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum KeyFormat {
    /// The canonical form.
    #[default]
    Canonical,
    /// `com,example,www)/path?query`, the SURT layout of web archive
    /// tools. It leaves out the scheme and the userinfo, so `ftp://h/a`
    /// and `http://h/a` share a key; it is not the Internet Archive's CDX
    /// key, which canonicalizes more.
    Surt,
    /// The canonical form's host (an IP literal as written).
    Host,
    /// The host's registrable domain by the Public Suffix List (eTLD+1);
    /// an IP literal, or a host that is itself a public suffix, is its own.
    Domain,
}

impl KeyFormat {
    /// Every kind, in the order the help lists them.
    pub const ALL: [KeyFormat; 4] = [
        KeyFormat::Canonical,
        KeyFormat::Surt,
        KeyFormat::Host,
        KeyFormat::Domain,
    ];

    /// The kind's name, as options spell it.
    pub const fn name(self) -> &'static str {
        match self {
            KeyFormat::Canonical => "canonical",
            KeyFormat::Surt => "surt",
            KeyFormat::Host => "host",
            KeyFormat::Domain => "domain",
        }
    }

    /// Appends the key of `input` under `normalizer` to `out`; on error
    /// `out` is left as it was.
    pub fn write(
        self,
        normalizer: &Normalizer,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<Changes, Rejection> {
        match self {
            KeyFormat::Canonical => Ok(normalizer.normalize_into(input, out, scratch)?),
            KeyFormat::Surt => Ok(normalize_surt_into(normalizer, input, out, scratch)?),
            KeyFormat::Host => Site::Host.write(normalizer, input, out, scratch),
            KeyFormat::Domain => Site::Domain.write(normalizer, input, out, scratch),
        }
    }

    /// The site this key stands for, when it is a host or a domain.
    pub const fn site(self) -> Option<Site> {
        match self {
            KeyFormat::Host => Some(Site::Host),
            KeyFormat::Domain => Some(Site::Domain),
            KeyFormat::Canonical | KeyFormat::Surt => None,
        }
    }
}

/// What a URI's site is: its host, or its registrable domain. Hosts and
/// domains are keys (`--key host`), and what per-site caps count by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    /// The canonical form's host (an IP literal as written).
    Host,
    /// The host's registrable domain by the Public Suffix List (eTLD+1);
    /// an IP literal, or a host that is itself a public suffix, is its own.
    Domain,
}

impl Site {
    /// The site's name, as options and a seen store spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Site::Host => "host",
            Site::Domain => "domain",
        }
    }

    /// Appends the site of `input`'s canonical form under `normalizer` to
    /// `out`; on error `out` is left as it was.
    fn write(
        self,
        normalizer: &Normalizer,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Scratch,
    ) -> Result<Changes, Rejection> {
        let start = out.len();
        let changes = normalizer.normalize_into(input, out, scratch)?;
        self.cut(out, start)?;
        Ok(changes)
    }

    /// Cuts the canonical form at `out[start..]` down to its site; without
    /// a host, removes it and says so.
    pub(crate) fn cut(self, out: &mut Vec<u8>, start: usize) -> Result<(), Rejection> {
        let canonical = &out[start..];
        let site = self.of(&SchemeHost::of_valid(canonical)).map(|site| {
            let from = site.as_ptr() as usize - canonical.as_ptr() as usize;
            from..from + site.len()
        });
        let Some(site) = site else {
            out.truncate(start);
            return Err(Rejection::new(Fault::NoHost));
        };
        // Only the site stays, where the canonical form began.
        out.copy_within(start + site.start..start + site.end, start);
        out.truncate(start + site.len());
        Ok(())
    }

    /// The site of a canonical URI, split as [`SchemeHost`] splits it: a
    /// slice of its host, or `None` when it has none (or an empty one).
    ///
    /// ```
    /// use urinorm::line::key::Site;
    /// use urinorm::uri::SchemeHost;
    /// let uri = SchemeHost::of_valid(b"http://news.bbc.co.uk/a");
    /// assert_eq!(Site::Host.of(&uri), Some(&b"news.bbc.co.uk"[..]));
    /// assert_eq!(Site::Domain.of(&uri), Some(&b"bbc.co.uk"[..]));
    /// assert_eq!(Site::Domain.of(&SchemeHost::of_valid(b"http://1.2.3.4/")), Some(&b"1.2.3.4"[..]));
    /// ```
    pub fn of<'u>(self, uri: &SchemeHost<'u>) -> Option<&'u [u8]> {
        let host = uri.host.filter(|h| !h.is_empty())?;
        let domain = match (self, uri.registered_name) {
            (Site::Domain, true) => crate::domain::suffix_list().registrable_domain(host),
            _ => None,
        };
        Some(domain.unwrap_or(host))
    }
}

impl FromStr for KeyFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<KeyFormat, String> {
        KeyFormat::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown key '{s}' (choose canonical, surt, host or domain)"))
    }
}
