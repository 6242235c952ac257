//! `urinorm resolve --base URI [FILE...]`: RFC 3986 §5.2 over every line.

use clap::Args;
use serde_json::json;
use urinorm::UriRef;
use urinorm::pipeline::{LineMapper, Mapped, Mode, Rejection};
use urinorm::resolve::{SchemeRule, resolve_into};
use urinorm::scratch::Slot;

use crate::cli::engine::{Job, RunArgs, execute};
use crate::cli::{Error, Outcome, absolute_base};

#[derive(Args, Debug)]
pub struct ResolveArgs {
    /// The base URI; it must have a scheme (RFC 3986 §5.1). Its fragment is ignored.
    #[arg(long, value_name = "URI")]
    pub base: String,
    /// Read a reference whose scheme equals the base's as relative (the
    /// backward-compatible reading of §5.2.2) instead of as absolute.
    #[arg(long)]
    pub non_strict: bool,
    /// Write exactly one line per input line, in order (for `paste`): an
    /// empty one for a rejected line; a blank line is the empty reference,
    /// which resolves to the base (RFC 3986 §5.2.2).
    #[arg(long)]
    pub aligned: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Resolution against one base, as the engine's line mapper.
struct ResolveLines<'a> {
    base: UriRef<'a>,
    rule: SchemeRule,
}

impl LineMapper for ResolveLines<'_> {
    fn map_line(
        &self,
        line: &[u8],
        out: &mut Vec<u8>,
        _: &mut Slot,
    ) -> Result<Option<Mapped>, Rejection> {
        let reference = UriRef::parse_bytes(line)?;
        let start = out.len();
        resolve_into(&self.base, &reference, self.rule, out)?;
        Ok(Some(Mapped::key(start..out.len())))
    }
}

/// Writes one resolved URI per non-blank input line; an invalid reference
/// gets a `file:line: reason` message on standard error instead.
pub fn run(args: &ResolveArgs) -> Result<Outcome, Error> {
    let base = absolute_base(&args.base)?;
    let rule = if args.non_strict {
        SchemeRule::NonStrict
    } else {
        SchemeRule::Strict
    };
    let extra = [("command", json!("resolve")), ("base", json!(args.base))];
    let mapper = ResolveLines { base, rule };
    let job = Job {
        aligned: args.aligned,
        line_buffered: args.run.line_buffered,
        ..Job::new(&mapper, Mode::Map, &extra)
    };
    execute(
        &args.run.read,
        args.run.output_path(),
        args.run.compression()?,
        job,
    )
}
