//! What a URI's key is, the bytes lines are compared and written by: its
//! canonical form at a rung, or that form as a SURT ([`crate::surt`]).

use std::str::FromStr;

use crate::error::InvalidUri;
use crate::normalize::{Changes, Normalizer};
use crate::surt::normalize_surt_into;

/// The kind of key.
///
/// ```
/// use urinorm::key::KeyFormat;
/// use urinorm::normalize::{Normalizer, Rung};
/// let mut out = Vec::new();
/// let key: KeyFormat = "surt".parse()?;
/// key.write(&Normalizer::new(Rung::Scheme), b"http://WWW.Example.com/a", &mut out)?;
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
}

impl KeyFormat {
    /// Every kind, in the order the help lists them.
    pub const ALL: [KeyFormat; 2] = [KeyFormat::Canonical, KeyFormat::Surt];

    /// The kind's name, as options spell it.
    pub const fn name(self) -> &'static str {
        match self {
            KeyFormat::Canonical => "canonical",
            KeyFormat::Surt => "surt",
        }
    }

    /// Appends the key of `input` under `normalizer` to `out`; on error
    /// `out` is left as it was.
    pub fn write(
        self,
        normalizer: &Normalizer,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Changes, InvalidUri> {
        match self {
            KeyFormat::Canonical => normalizer.normalize_into(input, out),
            KeyFormat::Surt => normalize_surt_into(normalizer, input, out),
        }
    }
}

impl FromStr for KeyFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<KeyFormat, String> {
        KeyFormat::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown key '{s}' (choose canonical or surt)"))
    }
}
