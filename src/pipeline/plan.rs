//! A run's decisions, made once: from its [`Options`], how it may use a
//! seen store and where its output goes, which combinations are refused,
//! how the store is consulted (at the end in bulk, or batch by batch),
//! whether new keys may spill, whether the set keeps its classes in order,
//! whether the output waits in a spool, whether commits run as it goes.
//! The rest of the engine reads the plan instead of deciding again.
//!
//! It knows options and their combinations; not lines, keys or files.

use super::store_join::SeenMode;
use super::{Emit, Mode, Options};

/// How a run may use a seen store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StoreAccess {
    None,
    /// Consulted, nothing admitted.
    ReadOnly,
    /// Consulted, and new keys admitted.
    Writable,
}

/// Where the output goes, as far as the plan cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputKind {
    /// A stream (standard output, a pipe, a compressed file): written once,
    /// in order.
    Stream,
    /// A regular file written from its start, which can be edited in place
    /// ([`super::Sinks::out_file`]).
    File,
}

/// What the engine does, decided once per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) mode: Mode,
    /// How the seen store is consulted.
    pub(crate) seen: SeenMode,
    /// The set keeps each class, in first-seen order, with its size: for
    /// `--emit count`, for a bulk join with the store, to sort.
    pub(crate) counting: bool,
    /// Sorting `canonical` or `first`: what each class writes is kept
    /// beside its key until the end.
    pub(crate) keeps_outputs: bool,
    /// New keys past the memory limit go to the spill, to be decided at
    /// the end. Never where each line is decided as it is read (verdicts,
    /// a store consulted batch by batch) nor for sorted classes under a
    /// cap, which is decided in input order.
    pub(crate) spills: bool,
    /// In bulk against a store, the output waits in a spool until the join
    /// (a regular file is edited in place instead).
    pub(crate) spools: bool,
    /// Line by line against a writable store, to a stream: what was written
    /// is committed as it goes.
    pub(crate) commits_as_it_goes: bool,
    /// Committing as it goes, the set forgets the classes committed once
    /// it outgrows its memory (they are the store's to answer for then).
    /// Not when the set keeps its classes (counting) or their outputs.
    pub(crate) forgets: bool,
    /// Per-site caps are counted.
    pub(crate) caps: bool,
}

/// A combination of options the engine cannot honour, in a sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Sorting writes at the end; verdicts follow the input line by line.
    SortedVerdicts,
    /// Sorting writes at the end; line-buffered answers each line at once.
    SortedLineBuffered,
    /// Sorting and caps act on classes: only when deduplicating.
    MappingSortedOrCapped,
    /// One output line per input line: only when mapping.
    AlignedDedup,
    /// A budget is counted in a seen store, which the run must write.
    BudgetWithoutStore,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Refused::SortedVerdicts => {
                "sorting cannot apply to verdicts, whose lines follow the input's"
            }
            Refused::SortedLineBuffered => {
                "sorting writes once all is read: it cannot answer line by line"
            }
            Refused::MappingSortedOrCapped => {
                "sorting and per-site caps act on classes: they need deduplication"
            }
            Refused::AlignedDedup => {
                "aligned output has a line for every input line: it cannot deduplicate"
            }
            Refused::BudgetWithoutStore => {
                "a per-site budget is kept in a seen store, which the run must be able to write"
            }
        })
    }
}

impl std::error::Error for Refused {}

impl Plan {
    /// The plan for `options`, a store used as `store`, into `output`; or
    /// why the combination cannot run.
    pub(crate) fn new(
        options: &Options,
        store: StoreAccess,
        output: OutputKind,
    ) -> Result<Plan, Refused> {
        if options.per_site_budget.is_some() && store != StoreAccess::Writable {
            return Err(Refused::BudgetWithoutStore);
        }
        let capped = options.per_site_cap.is_some() || options.per_site_budget.is_some();
        let emit = match options.mode {
            Mode::Map if options.sort || capped => return Err(Refused::MappingSortedOrCapped),
            Mode::Map => None,
            Mode::Dedup(_) if options.aligned => return Err(Refused::AlignedDedup),
            Mode::Dedup(Emit::Verdict) if options.sort => return Err(Refused::SortedVerdicts),
            Mode::Dedup(_) if options.sort && options.line_buffered => {
                return Err(Refused::SortedLineBuffered);
            }
            Mode::Dedup(emit) => Some(emit),
        };
        let seen = match (emit, store) {
            (None, _) | (_, StoreAccess::None) => SeenMode::Off,
            (Some(emit), _) if answers_live(emit, options) => SeenMode::Live,
            (Some(_), _) => SeenMode::Bulk,
        };
        let counting = seen == SeenMode::Bulk || emit == Some(Emit::Count) || options.sort;
        let keeps_outputs = options.sort && matches!(emit, Some(Emit::Canonical | Emit::First));
        let commits_as_it_goes = seen == SeenMode::Live
            && store == StoreAccess::Writable
            && options.line_buffered
            && output == OutputKind::Stream;
        Ok(Plan {
            mode: options.mode,
            seen,
            counting,
            keeps_outputs,
            spills: emit.is_some_and(|emit| emit != Emit::Verdict)
                && seen != SeenMode::Live
                && !(options.sort && capped),
            spools: seen == SeenMode::Bulk
                && output == OutputKind::Stream
                && emit != Some(Emit::Nothing),
            commits_as_it_goes,
            forgets: commits_as_it_goes && !counting && !keeps_outputs,
            caps: emit.is_some() && capped,
        })
    }

    /// Why the run's keys cannot be bounded by a memory limit (they all
    /// stay in memory to the end), or `None` when it can be: deduplicating
    /// runs that neither spill nor forget.
    pub(crate) fn unbounded(&self) -> Option<&'static str> {
        if !self.deduplicates() || self.spills || self.forgets {
            return None;
        }
        Some(match (self.mode, self.seen) {
            (Mode::Dedup(Emit::Verdict), SeenMode::Off) => {
                "--emit verdict decides each line as it is read, so no key can wait on disk"
            }
            (_, SeenMode::Live) if self.commits_as_it_goes => {
                "sorted, the classes are kept until the end, committed or not"
            }
            (_, SeenMode::Live) => {
                "a seen store consulted batch by batch (verdicts, caps, --sort, line by line) that commits only at the end keeps every key of the run until then (line-buffered to standard output, a run commits and forgets as it goes)"
            }
            _ => "sorted classes under a cap are decided in input order, in memory",
        })
    }

    /// Whether the run deduplicates.
    pub(crate) fn deduplicates(&self) -> bool {
        matches!(self.mode, Mode::Dedup(_))
    }
}

/// Whether a store must be consulted batch by batch: answers that cannot
/// wait for the whole input (verdicts, lines written as they are read);
/// caps, since a class the store holds must not use its site's budget; and
/// sorting, whose output is written once all is read anyway, where deciding
/// batch by batch keeps the held classes out of the sort. Others, counts
/// among them (written at the end), join it with the whole run at the end.
fn answers_live(emit: Emit, options: &Options) -> bool {
    match emit {
        Emit::Verdict => true,
        _ if options.per_site_cap.is_some()
            || options.per_site_budget.is_some()
            || options.sort =>
        {
            true
        }
        Emit::Canonical | Emit::First => options.line_buffered,
        Emit::Count | Emit::Nothing => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every combination of the options a plan reads, with a store used
    /// every way, into every kind of output.
    fn every_combination() -> Vec<(Options, StoreAccess, OutputKind)> {
        let modes = [
            Mode::Map,
            Mode::Dedup(Emit::Canonical),
            Mode::Dedup(Emit::First),
            Mode::Dedup(Emit::Count),
            Mode::Dedup(Emit::Verdict),
            Mode::Dedup(Emit::Nothing),
        ];
        let mut all = Vec::new();
        for mode in modes {
            for bits in 0..16u8 {
                let options = Options {
                    mode,
                    sort: bits & 1 != 0,
                    per_site_cap: (bits & 2 != 0).then_some(3),
                    line_buffered: bits & 4 != 0,
                    aligned: bits & 8 != 0,
                    ..Options::default()
                };
                for store in [
                    StoreAccess::None,
                    StoreAccess::ReadOnly,
                    StoreAccess::Writable,
                ] {
                    for output in [OutputKind::Stream, OutputKind::File] {
                        all.push((options.clone(), store, output));
                    }
                }
            }
        }
        all
    }

    /// One row of the table: the combination, then the plan or the refusal.
    fn row(options: &Options, store: StoreAccess, output: OutputKind) -> String {
        let mode = match options.mode {
            Mode::Map => "map".to_string(),
            Mode::Dedup(emit) => emit.name().to_string(),
        };
        let flags = [
            (options.sort, "sort"),
            (options.per_site_cap.is_some(), "cap"),
            (options.line_buffered, "lines"),
            (options.aligned, "aligned"),
        ];
        let flags: Vec<&str> = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
        let given = format!(
            "{mode:<9} {:<22} {store:<10?} {output:<6?}",
            flags.join(",")
        );
        let decided = match Plan::new(options, store, output) {
            Err(refused) => format!("refused: {refused:?}"),
            Ok(plan) => {
                let decided = [
                    (plan.counting, "counting"),
                    (plan.keeps_outputs, "outputs"),
                    (plan.spills, "spills"),
                    (plan.spools, "spools"),
                    (plan.commits_as_it_goes, "commits"),
                    (plan.forgets, "forgets"),
                    (plan.caps, "caps"),
                    (plan.unbounded().is_some(), "unbounded"),
                ];
                let decided: Vec<&str> = decided.iter().filter(|d| d.0).map(|d| d.1).collect();
                format!("{:<5?} {}", plan.seen, decided.join(","))
            }
        };
        format!("{given} | {decided}").trim_end().to_string()
    }

    /// The whole table, every combination a row, as `plan_table.txt` holds
    /// it: a change to any decision shows in the file's diff, reviewed.
    /// `URINORM_UPDATE_PLAN_TABLE=1` writes it anew.
    #[test]
    fn every_combination_is_planned_as_the_table_says() {
        let table: String = every_combination()
            .iter()
            .map(|(options, store, output)| row(options, *store, *output) + "\n")
            .collect();
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/pipeline/plan_table.txt");
        if std::env::var_os("URINORM_UPDATE_PLAN_TABLE").is_some() {
            std::fs::write(path, &table).unwrap();
        }
        let expected = std::fs::read_to_string(path).unwrap();
        for (n, (got, want)) in table.lines().zip(expected.lines()).enumerate() {
            assert_eq!(got, want, "row {} of plan_table.txt", n + 1);
        }
        assert_eq!(table.lines().count(), expected.lines().count());
    }

    /// What must hold whatever the table says.
    #[test]
    fn plans_keep_the_engine_s_invariants() {
        for (options, store, output) in every_combination() {
            let Ok(plan) = Plan::new(&options, store, output) else {
                continue;
            };
            let row = row(&options, store, output);
            if plan.seen == SeenMode::Live || options.mode == Mode::Dedup(Emit::Verdict) {
                assert!(!plan.spills, "decided line by line, nothing waits: {row}");
            }
            if !plan.deduplicates() {
                assert_eq!(plan.seen, SeenMode::Off, "{row}");
                assert!(!plan.spills && !plan.counting && !plan.caps, "{row}");
            }
            if store == StoreAccess::None {
                assert_eq!(plan.seen, SeenMode::Off, "{row}");
            }
            if plan.spools {
                assert!(
                    plan.seen == SeenMode::Bulk && output == OutputKind::Stream,
                    "{row}"
                );
            }
            if plan.commits_as_it_goes {
                assert!(
                    store == StoreAccess::Writable && options.line_buffered,
                    "{row}"
                );
            }
            if options.mode == Mode::Dedup(Emit::Verdict) && store != StoreAccess::None {
                assert_eq!(plan.seen, SeenMode::Live, "verdicts answer at once: {row}");
            }
        }
    }
}
