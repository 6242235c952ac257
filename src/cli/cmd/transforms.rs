//! `urinorm transforms`: every protocol-rung transform and preset, with its doc.

use std::io::{self, Write};

use urinorm::normalize::protocol::{PRESETS, TRACKING_PARAMS, Transform};

use crate::cli::{Error, Outcome};

pub fn run() -> Result<Outcome, Error> {
    io::stdout()
        .lock()
        .write_all(listing().as_bytes())
        .map_err(Error::stdout)?;
    Ok(Outcome::default())
}

/// The listing: transforms in the order they apply, then presets.
pub fn listing() -> String {
    let mut text = String::from(
        "Transforms of the protocol rung (--with NAME, --without NAME), in the order they apply:\n\n",
    );
    let width = Transform::ALL
        .iter()
        .map(|t| t.name().len())
        .max()
        .unwrap_or(0);
    for t in Transform::ALL {
        text += &format!("  {:<width$}  {}\n", t.name(), t.doc());
    }
    text += "\nPresets (--preset NAME):\n\n";
    for preset in PRESETS {
        let names: Vec<_> = preset.transforms().map(|t| t.name()).collect();
        text += &format!(
            "  {:<width$}  {}: {}\n",
            preset.name,
            preset.doc,
            names.join(", ")
        );
    }
    text += &format!(
        "\nTracking parameters (--tracking-params FILE replaces them): {}\n",
        TRACKING_PARAMS.join(", ")
    );
    text
}
