//! One module per subcommand.

pub mod dedup;
pub mod docs;
pub mod explain;
pub mod ladder;
pub mod ladder_page;
pub mod normalize;
pub mod resolve;
pub mod rules;
pub mod seen;
pub mod transforms;
