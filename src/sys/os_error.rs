//! An operating system's error in the words every message of urinorm
//! uses: `permission denied`, not `Permission denied (os error 13)`; an
//! error urinorm made itself is shown as it was written.
//!
//! It knows how an error reads, not where it came from.

use std::fmt;
use std::io;

/// Shows `error` as a clause of a sentence: the system's words without
/// their number, starting in lower case.
///
/// ```
/// use urinorm::sys::os_error::Reason;
/// let denied = std::io::Error::from_raw_os_error(13);
/// assert_eq!(Reason(&denied).to_string(), "permission denied");
/// let own = std::io::Error::other("the store changed");
/// assert_eq!(Reason(&own).to_string(), "the store changed");
/// ```
pub struct Reason<'e>(pub &'e io::Error);

/// The words for an error known only by its kind (a crate wrapped the
/// system's error): the system's own words for the usual kinds.
///
/// ```
/// use urinorm::sys::os_error::kind_words;
/// assert_eq!(kind_words(std::io::ErrorKind::NotFound), "no such file or directory");
/// ```
pub fn kind_words(kind: io::ErrorKind) -> String {
    use io::ErrorKind::*;
    let words = match kind {
        NotFound => "no such file or directory",
        PermissionDenied => "permission denied",
        ReadOnlyFilesystem => "read-only file system",
        StorageFull => "no space left on device",
        QuotaExceeded => "disk quota exceeded",
        AlreadyExists => "file exists",
        NotADirectory => "not a directory",
        IsADirectory => "is a directory",
        kind => return io::Error::from(kind).to_string(),
    };
    words.to_string()
}

impl fmt::Display for Reason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(code) = self.0.raw_os_error() else {
            return self.0.fmt(f);
        };
        let text = self.0.to_string();
        let words = text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text);
        let mut chars = words.chars();
        match chars.next() {
            Some(first) => write!(f, "{}{}", first.to_lowercase(), chars.as_str()),
            None => Ok(()),
        }
    }
}
