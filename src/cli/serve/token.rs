//! The bearer token: read from its file (never shown), then compared
//! with each request's in constant time. It knows the token and the
//! `Authorization` header; not which endpoints need it (`routes`).

use std::io::{self, Write};

use hyper::Request;
use hyper::body::Incoming;
use hyper::header::AUTHORIZATION;
use subtle::ConstantTimeEq;
use urinorm::escape::escape_str;
use urinorm::sys::os_error::Reason;

use super::Server;
use crate::cli::Error;

/// The token in `path`, less its final line break; never shown anywhere.
pub(super) fn read_token(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    let shown = escape_str(&path.display().to_string());
    let mut token = std::fs::read(path).map_err(|e| {
        Error::Usage(format!(
            "cannot read the token file '{shown}': {}",
            Reason(&e)
        ))
    })?;
    while token.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        token.pop();
    }
    if token.is_empty() {
        return Err(Error::Usage(format!("the token file '{shown}' is empty")));
    }
    if token.len() < MIN_TOKEN_BYTES {
        return Err(Error::Usage(format!(
            "the token in '{shown}' is {} bytes long, too short to keep a guesser out: use at least {MIN_TOKEN_BYTES} random bytes (say, `head -c 24 /dev/urandom | base64 > FILE`)",
            token.len()
        )));
    }
    let mode =
        std::fs::metadata(path).map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()));
    if mode.is_ok_and(|mode| mode & 0o044 != 0) {
        let _ = writeln!(
            io::stderr(),
            "urinorm: warning: the token file '{shown}' can be read by other users of this machine (chmod 600 it)"
        );
    }
    Ok(token)
}

/// The shortest token taken.
const MIN_TOKEN_BYTES: usize = 16;

impl Server {
    /// Whether the request carries the token (compared in constant time),
    /// or none is needed. The scheme's name is case-insensitive (RFC 9110
    /// §11.1).
    pub(super) fn authorized(&self, request: &Request<Incoming>) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let Some(value) = request.headers().get(AUTHORIZATION) else {
            return false;
        };
        let value = value.as_bytes();
        let given = match value.split_at_checked(7) {
            Some((scheme, given)) if scheme.eq_ignore_ascii_case(b"bearer ") => given,
            _ => return false,
        };
        bool::from(given.ct_eq(token))
    }
}
