//! The progress bar: bytes of input done, on standard error when it is a
//! terminal (indicatif). The engine only reports bytes; drawing is ours.

use std::io::{self, IsTerminal};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressState, ProgressStyle};
use urinorm::pipeline::Progress;
use urinorm::pipeline::input::{Input, total_size};

/// A bar over `inputs`: shown only when `enabled`, standard error is a
/// terminal, and the run does not write its lines to that terminal as it
/// goes (the bar would tear them).
pub struct Bar(ProgressBar);

/// An estimate of the time left is noise before this much has run.
const WARM_UP: Duration = Duration::from_secs(3);

impl Bar {
    /// `streams_to_stdout`: the run writes its output to standard output
    /// while it reads.
    pub fn new(inputs: &[Input], enabled: bool, streams_to_stdout: bool) -> Bar {
        let tears_output = streams_to_stdout && io::stdout().is_terminal();
        if !enabled || !io::stderr().is_terminal() || tears_output {
            return Bar(ProgressBar::hidden());
        }
        // Standard input has no size: bytes and rate only, no made-up total.
        // A compressed file's bar counts its compressed bytes.
        let (bar, template) = match total_size(inputs) {
            Some(total) => (
                ProgressBar::new(total),
                "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta_when_known}",
            ),
            None => (
                ProgressBar::no_length(),
                "{spinner} {binary_bytes} {binary_bytes_per_sec}",
            ),
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .with_key("eta_when_known", eta_when_known);
        bar.set_style(style);
        Bar(bar)
    }
}

/// The time left, once the rate has had time to settle.
fn eta_when_known(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    if state.elapsed() >= WARM_UP {
        let _ = write!(out, "{}s left", state.eta().as_secs());
    }
}

impl Progress for Bar {
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
}

/// The bar goes when the run is done, whatever the outcome.
impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
