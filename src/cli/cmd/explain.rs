//! `urinorm explain URI`: what each rung makes of one URI, and why, in words.

use std::io::{self, Write};

use clap::Args;
use urinorm::UriRef;
use urinorm::normalize::{Normalizer, Rung};

use crate::cli::{Error, Outcome};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The URI reference to explain.
    #[arg(value_name = "URI")]
    pub uri: String,
}

pub fn run(args: &ExplainArgs) -> Result<Outcome, Error> {
    let text = explain(&args.uri);
    let rejected = text.contains("rejected:");
    io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(Error::stdout)?;
    Ok(Outcome {
        rejected: u64::from(rejected),
    })
}

/// The explanation as text: the input, then each rung's output and the rules
/// that changed it. Passwords are masked (RFC 3986 §7.5).
pub fn explain(uri: &str) -> String {
    let mut text = format!("input     {}\n", mask_password(uri));
    for rung in Rung::ALL {
        let mut out = Vec::new();
        match Normalizer::new(rung).normalize_into(uri.as_bytes(), &mut out) {
            Ok(changes) => {
                let output = String::from_utf8_lossy(&out);
                text += &format!(
                    "{:<9} {}   ({} {})\n",
                    rung.name(),
                    mask_password(&output),
                    rung.section(),
                    rung_title(rung)
                );
                let rules: Vec<_> = changes.rules().filter(|r| r.rung() == rung).collect();
                if rules.is_empty() {
                    text += "          - no change at this rung\n";
                }
                for rule in rules {
                    text += &format!("          - {}\n", rule.description());
                }
            }
            Err(e) => {
                text += &format!("{:<9} rejected: {e}\n", rung.name());
                if e.offset() <= uri.len() {
                    text += &format!("          {}^\n", " ".repeat(e.offset()));
                }
                break;
            }
        }
    }
    text
}

fn rung_title(rung: Rung) -> &'static str {
    match rung {
        Rung::String => "simple string comparison",
        Rung::Syntax => "syntax-based normalization",
        Rung::Scheme => "scheme-based normalization",
    }
}

/// `uri` with the password of its userinfo (after the first `:`) shown as `****`.
fn mask_password(uri: &str) -> String {
    let Some(userinfo) = UriRef::parse(uri).ok().and_then(|u| u.userinfo()) else {
        return uri.to_string();
    };
    let Some(colon) = userinfo.find(':') else {
        return uri.to_string();
    };
    // The userinfo is a slice of `uri`; find where it starts.
    let start = userinfo.as_ptr() as usize - uri.as_ptr() as usize;
    let (pw_start, pw_end) = (start + colon + 1, start + userinfo.len());
    format!("{}****{}", &uri[..pw_start], &uri[pw_end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(mask_password("http://u:secret@h/"), "http://u:****@h/");
        assert_eq!(mask_password("http://u@h/"), "http://u@h/");
        assert!(!explain("HTTP://u:secret@H:80/").contains("secret"));
    }
}
