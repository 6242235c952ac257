//! One module per subcommand.

pub mod resolve;
