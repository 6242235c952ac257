//! `urinorm explain URI`: what each rung makes of one URI, and why, in words.

use std::io::{self, Write};

use clap::Args;
use urinorm::normalize::{Normalizer, Rung};
use urinorm::uri::mask_password;

use super::normalize::RungArgs;
use crate::cli::{Error, Outcome};

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The URI reference to explain.
    #[arg(value_name = "URI")]
    pub uri: String,
    /// The protocol rung's transforms (default: the safe preset).
    #[command(flatten)]
    pub rung: RungArgs,
}

pub fn run(args: &ExplainArgs) -> Result<Outcome, Error> {
    let flags = RungArgs {
        rung: Some(Rung::Protocol),
        ..args.rung.clone()
    };
    let text = explain(&args.uri, &flags.normalizer()?);
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
/// that changed it; the protocol rung is `protocol`'s. Passwords are masked
/// (RFC 3986 §7.5).
pub fn explain(uri: &str, protocol: &Normalizer) -> String {
    let mut text = format!("input     {}\n", mask_password(uri));
    for rung in Rung::ALL {
        let mut out = Vec::new();
        let normalizer = if rung == Rung::Protocol {
            protocol.clone()
        } else {
            Normalizer::new(rung)
        };
        match normalizer.normalize_into(uri.as_bytes(), &mut out) {
            Ok(changes) => {
                let output = String::from_utf8_lossy(&out);
                text += &format!(
                    "{:<9} {}   ({} {})\n",
                    rung.name(),
                    mask_password(&output),
                    rung.section(),
                    rung_title(rung)
                );
                let mut steps: Vec<String> = changes
                    .rules()
                    .filter(|r| r.rung() == rung)
                    .map(|r| r.description().to_string())
                    .collect();
                if rung == Rung::Protocol {
                    steps.extend(
                        changes
                            .transforms()
                            .map(|t| format!("{}: {}", t.name(), t.doc())),
                    );
                }
                if steps.is_empty() {
                    text += "          - no change at this rung\n";
                }
                for step in steps {
                    text += &format!("          - {step}\n");
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
        Rung::Protocol => "protocol-based normalization",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(mask_password("http://u:secret@h/"), "http://u:****@h/");
        assert_eq!(mask_password("http://u@h/"), "http://u@h/");
        assert!(
            !explain("HTTP://u:secret@H:80/", &Normalizer::new(Rung::Protocol)).contains("secret")
        );
    }
}
