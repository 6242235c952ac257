//! `SeenSet`: a seen store (the command line's `--seen DIR`, same files,
//! same fingerprints, same configuration guard) for a running crawler in
//! Python: values in, "new or not" out, admitted keys kept in memory until
//! committed.
//!
//! The store itself is the library's `urinorm::store::Store`; here are only
//! the keys of Python values and the keys not yet committed.

use std::collections::HashSet;
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyString};

use urinorm::fingerprint::fingerprint;
use urinorm::line::key::Site;
use urinorm::line::{Columns, NormalizeLines};
use urinorm::pipeline::{Budget, LineMapper};
use urinorm::scratch::Slot;
use urinorm::service::SiteBudget;
use urinorm::store::{
    Access, Clock, Config, Holding, NO_SITE, Staging, Store, StoreError, parse_duration, site_print,
};

use crate::{PyNormalizer, arrow, parse_key};

create_exception!(
    urinorm,
    SeenStoreError,
    PyException,
    "A seen store could not be opened, read or written: another writer holds it, it was made with other key options, or a file of it is damaged (the message names which)."
);

fn store_error(e: StoreError) -> PyErr {
    SeenStoreError::new_err(e.to_string())
}

/// The keys a frontier makes with `normalizer`: of kind `key`, and only of
/// what a crawler fetches.
fn frontier_lines(normalizer: &PyNormalizer, key: &str) -> PyResult<NormalizeLines> {
    Ok(NormalizeLines {
        fetchable: true,
        crawled: true,
        ..NormalizeLines::new(
            normalizer.normalizer.clone(),
            parse_key(key)?,
            Columns::default(),
        )
    })
}

/// The key configuration a seen store of `normalizer`'s keys of kind `key`
/// records, setting by setting: what `seen export` writes in a history's
/// `_urinorm.json`.
#[pyfunction]
pub fn seen_config(normalizer: &PyNormalizer, key: &str) -> PyResult<Vec<(String, String)>> {
    let lines = frontier_lines(normalizer, key)?;
    Ok(lines
        .key_settings()
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect())
}

/// An open seen store and the keys admitted since the last commit.
#[pyclass(module = "urinorm._urinorm", name = "SeenSet")]
pub struct PySeenSet {
    lines: NormalizeLines,
    store: Option<Store>,
    /// Admitted, not yet committed.
    pending: HashSet<u128>,
    /// How many of `pending` the store holds, expired (admitted again).
    renewed: u64,
    /// Under a per-site budget, what it has spent.
    budget: Option<SiteBudget>,
    /// New keys past their site's budget, not admitted.
    capped: u64,
}

/// A value's key: its fingerprint, and under a budget its site's print
/// and name.
struct Keyed {
    print: u128,
    site: u64,
    name: Vec<u8>,
}

#[pymethods]
impl PySeenSet {
    /// Opens (or makes) the store at `path` for keys `normalizer` makes of
    /// kind `key`; with `wait`, waits for another writer. With `max_age`
    /// (seconds), a key admitted longer ago counts as not held (and is
    /// admitted again); `now` (seconds since the epoch) stands for the
    /// clock's time.
    /// With `budget_per_host` (or `budget_per_domain`) N, at most N keys
    /// of each host (registrable domain) are in the store: a new key past
    /// it is answered not new, and counted (`capped`).
    #[new]
    #[pyo3(signature = (path, normalizer, key, wait, max_age=None, now=None, budget_per_host=None, budget_per_domain=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        normalizer: &PyNormalizer,
        key: &str,
        wait: bool,
        max_age: Option<Age>,
        now: Option<f64>,
        budget_per_host: Option<u64>,
        budget_per_domain: Option<u64>,
    ) -> PyResult<Self> {
        let clock = clock(max_age, now)?;
        let mut lines = frontier_lines(normalizer, key)?;
        let budget = match (budget_per_host, budget_per_domain) {
            (Some(_), Some(_)) => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "a budget is per host or per domain, not both",
                ));
            }
            (Some(limit), _) => Some(Budget {
                site: Site::Host,
                limit,
            }),
            (_, Some(limit)) => Some(Budget {
                site: Site::Domain,
                limit,
            }),
            (None, None) => None,
        };
        lines.site = budget.map(|b| b.site);
        let config = Config::new(lines.key_settings());
        // Asked a few keys at a time: its runs' filters spare most block reads.
        let mut store = py
            .detach(|| {
                let mut store = Store::open(&path, &config, Access::Write { wait })?;
                store.keep_filters().map(|()| store)
            })
            .map_err(store_error)?;
        store.set_clock(clock);
        let budget = budget
            .map(|budget| py.detach(|| SiteBudget::start(budget, &mut store)))
            .transpose()
            .map_err(store_error)?;
        Ok(PySeenSet {
            lines,
            store: Some(store),
            pending: HashSet::new(),
            renewed: 0,
            budget,
            capped: 0,
        })
    }

    /// New keys past their site's budget since the store was opened, not
    /// admitted.
    #[getter]
    fn capped(&self) -> u64 {
        self.capped
    }

    /// For each value of a list (`str` or `None`): whether it is new (then
    /// admitted), or with `contains`, whether it is held; `None` where the
    /// value is `None` or not a URI reference.
    fn ask_list(
        &mut self,
        py: Python<'_>,
        values: Vec<Option<Bound<'_, PyString>>>,
        contains: bool,
    ) -> PyResult<Vec<Option<bool>>> {
        let texts = values
            .iter()
            .map(|v| v.as_ref().map(|s| s.to_str()).transpose())
            .collect::<PyResult<Vec<_>>>()?;
        let prints = py.detach(|| self.prints(texts.iter().map(|t| t.map(str::as_bytes))));
        self.ask(py, prints, contains)
    }

    /// As `ask_list`, for a pyarrow `string` or `large_string` array read
    /// in place.
    fn ask_arrow(
        &mut self,
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
        contains: bool,
    ) -> PyResult<Vec<Option<bool>>> {
        let capsules = array.call_method0("__arrow_c_array__")?;
        let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = capsules.extract()?;
        let strings = arrow::StringArray::borrow(&schema, &array)?;
        let prints = py.detach(|| self.prints((0..strings.len()).map(|i| strings.value(i))));
        self.ask(py, prints, contains)
    }

    /// Admits keys made by the caller (bytes, fingerprinted as they are):
    /// whether each is new.
    fn add_keys(&mut self, py: Python<'_>, keys: Vec<Vec<u8>>) -> PyResult<Vec<bool>> {
        let prints = keys
            .iter()
            .map(|k| {
                Some(Keyed {
                    print: u128::from_be_bytes(fingerprint(k)),
                    site: NO_SITE,
                    name: Vec::new(),
                })
            })
            .collect();
        let asked = self.ask(py, prints, false)?;
        Ok(asked.into_iter().map(|new| new == Some(true)).collect())
    }

    /// Commits the keys admitted since the last commit; returns how many.
    fn commit(&mut self, py: Python<'_>) -> PyResult<u64> {
        let pending: Vec<u128> = self.pending.drain().collect();
        let (sited, names) = match &mut self.budget {
            Some(budget) => (budget.sited(pending.iter().copied()), budget.take_names()),
            None => {
                let mut sited: Vec<(u128, u64)> = pending.iter().map(|&p| (p, NO_SITE)).collect();
                sited.sort_unstable();
                (sited, Vec::new())
            }
        };
        let renewed = std::mem::take(&mut self.renewed);
        let store = self.store.as_mut().ok_or_else(closed)?;
        let committed = py.detach(|| {
            store.stage_sited(sited.into_iter(), Staging::Admit { renewed }, names)?;
            store.publish()
        });
        let committed = committed.map_err(store_error)?;
        if let Some(budget) = &mut self.budget {
            budget.committed(pending.iter());
        }
        Ok(committed.admitted)
    }

    /// Commits, then lets the store go (its lock with it).
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        if self.store.is_some() {
            self.commit(py)?;
        }
        self.store = None;
        Ok(())
    }

    /// Lets the store go without committing (after an error, say: keys
    /// admitted since the last commit are answered new again next time).
    fn discard(&mut self) {
        self.pending.clear();
        self.renewed = 0;
        self.store = None;
    }

    /// The distinct keys held: committed and admitted since (expired ones
    /// among them, admitted again, counted once).
    fn __len__(&self) -> PyResult<usize> {
        let store = self.store.as_ref().ok_or_else(closed)?;
        Ok((store.keys() + self.pending.len() as u64 - self.renewed) as usize)
    }

    /// The settings the store's keys are made with.
    fn config(&self) -> PyResult<String> {
        Ok(self.store.as_ref().ok_or_else(closed)?.config().to_string())
    }
}

/// A length of time as Python gives it: seconds, or text as every front
/// end takes it (`"1h30m"`, [`parse_duration`]).
#[derive(FromPyObject)]
enum Age {
    Seconds(f64),
    Text(String),
}

/// `text` as a length of time, in seconds: the grammar of every front end
/// (`"7d"`, `"1h30m"`, `"1day 12h"`).
#[pyfunction(name = "parse_duration")]
pub fn parse_duration_seconds(text: &str) -> PyResult<f64> {
    parse_duration(text)
        .map(|age| age.as_secs_f64())
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

/// The clock of `max_age` and `now` (seconds since the epoch).
fn clock(max_age: Option<Age>, now: Option<f64>) -> PyResult<Clock> {
    let seconds = |s: f64, what: &str| {
        std::time::Duration::try_from_secs_f64(s).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "{what} must be a number of seconds, not below 0"
            ))
        })
    };
    let clock = match now {
        Some(now) => {
            let time = std::time::SystemTime::UNIX_EPOCH + seconds(now, "now")?;
            let stamp = urinorm::store::Stamp::of(time)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
            Clock::at(stamp)
        }
        None => Clock::system(),
    };
    let max_age = match max_age {
        Some(Age::Seconds(age)) => Some(seconds(age, "max_age")?),
        Some(Age::Text(text)) => Some(
            parse_duration(&text)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("max_age: {e}")))?,
        ),
        None => None,
    };
    Ok(match max_age {
        Some(age) => clock.with_max_age(age),
        None => clock,
    })
}

fn closed() -> PyErr {
    SeenStoreError::new_err("the SeenSet is closed")
}

impl PySeenSet {
    /// Each value's key; `None` for a null value, or one the line mapper
    /// rejects (not a URI reference, not fetchable).
    fn prints<'v>(&self, values: impl Iterator<Item = Option<&'v [u8]>>) -> Vec<Option<Keyed>> {
        let (mut out, mut slot) = (Vec::new(), Slot::default());
        values
            .map(|value| {
                out.clear();
                let value = value?;
                let mapped = self.lines.map_line(value, &mut out, &mut slot).ok()??;
                let name = mapped
                    .site
                    .map(|range| out[range].to_vec())
                    .unwrap_or_default();
                let key = mapped.key.map_or(value, |range| &out[range]);
                Some(Keyed {
                    print: u128::from_be_bytes(fingerprint(key)),
                    site: match name.is_empty() {
                        true => NO_SITE,
                        false => site_print(&name),
                    },
                    name,
                })
            })
            .collect()
    }

    /// Answers for `prints`: looked up in the pending keys, then together in
    /// the store (with the GIL released); new ones are admitted.
    fn ask(
        &mut self,
        py: Python<'_>,
        prints: Vec<Option<Keyed>>,
        contains: bool,
    ) -> PyResult<Vec<Option<bool>>> {
        let unknown: Vec<u128> = prints
            .iter()
            .flatten()
            .map(|k| k.print)
            .filter(|p| !self.pending.contains(p))
            .collect();
        let store = self.store.as_ref().ok_or_else(closed)?;
        let holdings = py.detach(|| store.holds(&unknown)).map_err(store_error)?;
        let (mut held, mut expired) = (HashSet::new(), HashSet::new());
        for (print, holding) in unknown.into_iter().zip(holdings) {
            match holding {
                Holding::Held => held.insert(print),
                Holding::Expired => expired.insert(print),
                Holding::Absent => false,
            };
        }
        Ok(prints
            .into_iter()
            .map(|keyed| {
                let Keyed { print, site, name } = keyed?;
                let known = held.contains(&print) || self.pending.contains(&print);
                if contains {
                    return Some(known);
                }
                if known {
                    return Some(false);
                }
                if let Some(budget) = &mut self.budget
                    && !budget.spend(print, site, &name)
                {
                    self.capped += 1;
                    return Some(false);
                }
                // Inserted, so a repeat later in the batch is not new.
                self.pending.insert(print);
                self.renewed += u64::from(expired.contains(&print));
                Some(true)
            })
            .collect())
    }
}
