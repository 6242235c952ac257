//! The progress bar: bytes of input done, on standard error when it is a
//! terminal (indicatif). The engine only reports bytes; drawing is ours.

use std::io::{self, IsTerminal};

use indicatif::{ProgressBar, ProgressStyle};
use urinorm::pipeline::Progress;
use urinorm::pipeline::input::{Input, total_bytes};

/// A bar over `inputs`, hidden unless `enabled` and standard error is a terminal.
pub struct Bar(ProgressBar);

impl Bar {
    pub fn new(inputs: &[Input], enabled: bool) -> Bar {
        if !enabled || !io::stderr().is_terminal() {
            return Bar(ProgressBar::hidden());
        }
        let bar = match total_bytes(inputs) {
            Some(total) => ProgressBar::new(total),
            None => ProgressBar::no_length(),
        };
        let style = ProgressStyle::with_template(
            "{bar:40} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Bar(bar)
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
