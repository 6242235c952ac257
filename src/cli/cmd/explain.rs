//! `urinorm explain URI`: what each rung makes of one URI, and why, in words.

use std::io::{self, Write};

use clap::Args;
use urinorm::escape::escape_str;
use urinorm::normalize::{Changes, Normalizer, Rung, Scratch};
use urinorm::pipeline::Rejection;
use urinorm::rules::{Events, RuleId};
use urinorm::uri::mask_password;

use crate::cli::args::RungArgs;
use crate::cli::rejects::Reason;
use crate::cli::{Error, Outcome};
use urinorm::escape::escape;

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
    let explanation = explain(&args.uri, &flags.normalizer()?);
    io::stdout()
        .lock()
        .write_all(explanation.text.as_bytes())
        .map_err(Error::stdout)?;
    Ok(Outcome {
        rejected: u64::from(explanation.rejected),
        ..Outcome::default()
    })
}

/// What `explain` found.
pub struct Explanation {
    /// The input, then each rung's output and the rules that changed it.
    pub text: String,
    /// Whether a rung rejected the input (it is not a URI reference, or its
    /// host or port cannot be what its scheme names).
    pub rejected: bool,
}

/// The explanation of `uri`: each rung in turn, the protocol rung being
/// `protocol`'s. Passwords are masked (RFC 3986 §7.5).
pub fn explain(uri: &str, protocol: &Normalizer) -> Explanation {
    // The URI may hold bytes a terminal would act on: it is shown escaped.
    let shown = |text: &str| escape(mask_password(text).as_bytes(), usize::MAX);
    let mut text = format!("input     {}\n", shown(uri));
    for rung in Rung::ALL {
        let mut out = Vec::new();
        let normalizer = if rung == Rung::Protocol {
            protocol.clone()
        } else {
            Normalizer::new(rung)
        };
        let (mut fired, mut scratch) = (Vec::new(), Scratch::default());
        match normalizer.normalize_traced(uri.as_bytes(), &mut out, &mut fired, &mut scratch) {
            Ok(changes) => {
                let output = String::from_utf8_lossy(&out);
                text += &format!(
                    "{:<9} {}   ({} {})\n",
                    rung.name(),
                    shown(&output),
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
                    steps.extend(site_rule_steps(&normalizer, &fired, changes));
                }
                if steps.is_empty() {
                    text += "          - no change at this rung\n";
                }
                for step in steps {
                    text += &format!("          - {step}\n");
                }
            }
            Err(e) => {
                let e = Rejection::from(e);
                text += &format!("{:<9} rejected: {}\n", rung.name(), Reason(&e));
                if let Some(before) = e.offset().and_then(|at| uri.as_bytes().get(..at)) {
                    // Under the byte as shown: escapes are wider than bytes.
                    let width = escape(before, usize::MAX).chars().count();
                    text += &format!("          {}^\n", " ".repeat(width));
                }
                return Explanation {
                    text,
                    rejected: true,
                };
            }
        }
    }
    Explanation {
        text,
        rejected: false,
    }
}

/// The site rules that changed the URI, by label (from the user's files:
/// escaped), and what else they noted.
fn site_rule_steps(normalizer: &Normalizer, fired: &[RuleId], changes: Changes) -> Vec<String> {
    let Some(rules) = normalizer.rules() else {
        return Vec::new();
    };
    let mut steps: Vec<String> = fired
        .iter()
        .map(|&rule| format!("{}: site rule", escape_str(rules.label(rule))))
        .collect();
    let events = changes.site_events();
    if events.contains(Events::COMPLETE_PROVIDER) {
        steps.push("a ClearURLs provider blocks this URI whole (completeProvider): passed on unchanged by it, and counted".into());
    }
    if events.contains(Events::REDIRECTION) {
        steps.push("a ClearURLs redirection matches: not followed, counted".into());
    }
    steps
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
            !explain("HTTP://u:secret@H:80/", &Normalizer::new(Rung::Protocol))
                .text
                .contains("secret")
        );
    }

    #[test]
    fn rejection_is_decided_not_read_back_from_the_text() {
        let protocol = Normalizer::new(Rung::Protocol);
        let valid = explain("http://a/rejected:x", &protocol);
        assert!(valid.text.contains("rejected:") && !valid.rejected);
        assert!(explain("http://a b/", &protocol).rejected);
    }
}
