//! Removing parameters from a query or a fragment in place, the other
//! parameters' bytes and order untouched.

use std::ops::Range;

/// Keeps the `&`-separated parameters of `out[within]` whose names `keep`
/// accepts, in order; says whether any went. When every one goes, the `?`
/// or `#` before `within` goes too: what is left is no query at all, not an
/// empty one (which a server can tell from no query, §6.2.3).
pub(super) fn retain_params(
    out: &mut Vec<u8>,
    within: Range<usize>,
    mut keep: impl FnMut(&[u8]) -> bool,
) -> bool {
    let (start, end) = (within.start, within.end);
    // Most queries keep every parameter: look before moving any byte.
    let all_kept = out[start..end]
        .split(|&b| b == b'&')
        .all(|param| keep(param_name(param)));
    if start == end || all_kept {
        return false;
    }
    let (mut read, mut write) = (start, start);
    let (mut changed, mut kept_any) = (false, false);
    loop {
        let param_end = memchr::memchr(b'&', &out[read..end]).map_or(end, |n| read + n);
        if keep(param_name(&out[read..param_end])) {
            if kept_any {
                out[write] = b'&';
                write += 1;
            }
            kept_any = true;
            out.copy_within(read..param_end, write);
            write += param_end - read;
        } else {
            changed = true;
        }
        if param_end == end {
            break;
        }
        read = param_end + 1;
    }
    if changed {
        let from = if kept_any { write } else { start - 1 };
        out.drain(from..end);
    }
    changed
}

/// A parameter's name: the bytes before its first `=`.
pub(super) fn param_name(param: &[u8]) -> &[u8] {
    &param[..memchr::memchr(b'=', param).unwrap_or(param.len())]
}

/// Parameter names, some of them prefixes (`pf_rd_*`), compared without
/// regard to ASCII case.
#[derive(Clone, Debug, Default)]
pub struct Names {
    exact: Vec<Box<[u8]>>,
    prefixes: Vec<Box<[u8]>>,
}

impl Names {
    /// Adds a name; one ending in `*` is a prefix (`*` alone: every name).
    pub(super) fn add(&mut self, name: &str) {
        let lower = name.to_ascii_lowercase().into_bytes();
        match lower.strip_suffix(b"*") {
            Some(prefix) => self.prefixes.push(prefix.into()),
            None => self.exact.push(lower.into()),
        }
    }

    pub(super) fn matches(&self, name: &[u8]) -> bool {
        self.exact.iter().any(|n| n.eq_ignore_ascii_case(name))
            || self
                .prefixes
                .iter()
                .any(|p| name.len() >= p.len() && name[..p.len()].eq_ignore_ascii_case(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retained(uri: &str, drop: &[&str]) -> String {
        let mut out = uri.as_bytes().to_vec();
        let at = uri.find('?').unwrap() + 1;
        let end = uri.find('#').unwrap_or(uri.len());
        retain_params(&mut out, at..end, |name| {
            !drop.contains(&std::str::from_utf8(name).unwrap())
        });
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn parameters_go_and_the_rest_stay_as_written() {
        assert_eq!(
            retained("http://a/?x=1&ref=2&y", &["ref"]),
            "http://a/?x=1&y"
        );
        assert_eq!(retained("http://a/?ref=2&x=1", &["ref"]), "http://a/?x=1");
        assert_eq!(retained("http://a/?x=1&ref", &["ref"]), "http://a/?x=1");
        assert_eq!(retained("http://a/?&&x&", &["ref"]), "http://a/?&&x&");
        assert_eq!(retained("http://a/?ref=1&ref=2#f", &["ref"]), "http://a/#f");
        assert_eq!(retained("http://a/?ref#f", &["ref"]), "http://a/#f");
        assert_eq!(retained("http://a/?#f", &["ref"]), "http://a/?#f");
        assert_eq!(retained("http://a/?x=a=b", &["x"]), "http://a/");
    }

    #[test]
    fn names_and_prefixes_ignore_case() {
        let mut names = Names::default();
        names.add("Ref");
        names.add("pf_rd_*");
        assert!(names.matches(b"REF") && names.matches(b"PF_RD_p") && names.matches(b"pf_rd_"));
        assert!(!names.matches(b"refs") && !names.matches(b"pf_r"));
        let mut every = Names::default();
        every.add("*");
        assert!(every.matches(b"") && every.matches(b"anything"));
    }
}
