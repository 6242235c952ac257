//! The per-site budget flags, shared by every command that admits keys to
//! a seen store (`dedup --seen`, `seen add`, `serve`).

use clap::Args;
use urinorm::line::key::Site;
use urinorm::pipeline::Budget;

#[derive(Args, Debug, Default)]
pub struct BudgetArgs {
    /// Admit at most N keys of each host to the seen store, across runs
    /// and clients: a new URI of a host whose budget is spent is counted
    /// as capped (and written to --capped) and not admitted. Keys the
    /// store expires or forgets give their slots back; the store counts,
    /// the limit is this run's (it may change between runs).
    #[arg(long, value_name = "N", conflicts_with = "budget_per_domain")]
    pub budget_per_host: Option<u64>,
    /// As --budget-per-host, for each registrable domain (Public Suffix
    /// List). A store counts one kind of site, the one its first budget
    /// named.
    #[arg(long, value_name = "N")]
    pub budget_per_domain: Option<u64>,
}

impl BudgetArgs {
    /// The budget asked for.
    pub fn budget(&self) -> Option<Budget> {
        let (site, limit) = match (self.budget_per_host, self.budget_per_domain) {
            (Some(n), _) => (Site::Host, n),
            (_, Some(n)) => (Site::Domain, n),
            (None, None) => return None,
        };
        Some(Budget { site, limit })
    }
}
