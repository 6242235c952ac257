//! The flag groups several subcommands share (clap's `#[command(flatten)]`
//! groups): the rung and its rules, the columns and keys of a line, the
//! scope filters. Each maps flags onto the library's types and knows no
//! subcommand.

mod budget;
mod columns;
mod rung;
mod scope;

pub use budget::BudgetArgs;
pub use columns::{ColumnArgs, Feeds, IndexArgs, LineArgs, needs_host};
pub use rung::{RulesArgs, RungArgs};
