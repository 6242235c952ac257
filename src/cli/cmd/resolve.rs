//! `urinorm resolve --base URI [FILE...]`: RFC 3986 §5.2 over every line.

use std::io::{self, Write};

use clap::Args;

use crate::cli::{Error, Outcome, input_names};
use urinorm::UriRef;
use urinorm::pipeline::input::{Input, lines};
use urinorm::resolve::{SchemeRule, resolve_into};

#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The base URI; it must have a scheme (RFC 3986 §5.1). Its fragment is ignored.
    #[arg(long, value_name = "URI")]
    pub base: String,
    /// Read a reference whose scheme equals the base's as relative (the
    /// backward-compatible reading of §5.2.2) instead of as absolute.
    #[arg(long)]
    pub non_strict: bool,
    /// Files of references, one a line; none or `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
}

/// Writes one resolved URI per non-blank input line; an invalid reference
/// gets a `file:line: reason` message on standard error instead.
pub fn run(args: &ResolveArgs) -> Result<Outcome, Error> {
    let base = UriRef::parse(&args.base).map_err(|e| {
        Error::Usage(format!(
            "the base '{}' is not a URI reference: {e}",
            args.base
        ))
    })?;
    if base.is_relative() {
        return Err(Error::Usage(format!(
            "the base '{}' has no scheme (RFC 3986 §5.1)",
            args.base
        )));
    }
    let rule = if args.non_strict {
        SchemeRule::NonStrict
    } else {
        SchemeRule::Strict
    };

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut target = Vec::new();
    let mut outcome = Outcome::default();
    for name in input_names(&args.files) {
        let input = Input::open(name)?;
        for (number, line) in lines(input.bytes()) {
            if line.is_empty() {
                continue;
            }
            match UriRef::parse_bytes(line) {
                Ok(reference) => {
                    target.clear();
                    // The base was checked to have a scheme, the one way this fails.
                    resolve_into(&base, &reference, rule, &mut target)
                        .map_err(|e| Error::Usage(e.to_string()))?;
                    target.push(b'\n');
                    out.write_all(&target).map_err(Error::stdout)?;
                }
                Err(e) => {
                    outcome.rejected += 1;
                    eprintln!("{}:{number}: {e}", input.name());
                }
            }
        }
    }
    out.flush().map_err(Error::stdout)?;
    Ok(outcome)
}
