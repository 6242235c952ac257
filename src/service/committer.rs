//! The committer: the store's one writer. It commits the keys admitted
//! (every `commit_every`, or sooner when enough wait), merges, and does
//! the maintenance asked while serving (forget, expire, compact), one job
//! after another, each written while lookups read the store. It knows
//! the store and the pending sets; not lines or bodies.

use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, mpsc};
use std::time::{Duration, Instant};

use super::{CommitReport, Event, Pending, PrintSet, Refused, Shared};
use crate::store::{Clock, Committed, Holding, NO_SITE, Staging, StoreError};

/// Maintenance asked of the committer, and where its answer goes.
pub(super) enum Job {
    /// Forget these keys (distinct): the answer says which were held.
    Forget(Vec<u128>, mpsc::Sender<Result<Vec<bool>, Refused>>),
    /// Remove the keys admitted longer ago than this, for good.
    Expire(Duration, mpsc::Sender<Result<Committed, Refused>>),
    /// Merge every run into one.
    Compact(mpsc::Sender<Result<Committed, Refused>>),
}

impl Shared {
    /// Hands `job` (made with the channel its answer comes back on) to the
    /// committer and waits for its answer.
    pub(super) fn run_job<T>(
        &self,
        job: impl FnOnce(mpsc::Sender<Result<T, Refused>>) -> Job,
    ) -> Result<T, Refused> {
        let (reply, answer) = mpsc::channel();
        {
            let mut pending = self.pending();
            if pending.closed {
                return Err(Refused::Stopping);
            }
            if let Some(why) = &pending.damaged {
                return Err(Refused::Damaged(why.clone()));
            }
            pending.jobs.push_back(job(reply));
            self.wake.notify_all();
        }
        // A committer that ends drops the channel: the service stopped.
        answer.recv().unwrap_or(Err(Refused::Stopping))
    }

    /// The committer: commits every `commit_every`, or sooner when enough
    /// keys wait, then does the maintenance asked meanwhile, until closed;
    /// then commits once more. Once the store is found damaged, it commits
    /// nothing more (maintenance is refused).
    pub(super) fn commit_loop(&self) -> Result<(), StoreError> {
        let mut due = Instant::now() + self.settings.commit_every;
        loop {
            let (closing, renewed, jobs, damaged) = {
                let mut pending = self.wait_until_due(due);
                if Instant::now() >= due {
                    due = Instant::now() + self.settings.commit_every;
                }
                let jobs = std::mem::take(&mut pending.jobs);
                let (closing, damaged) = (pending.closed, pending.damaged.clone());
                let idle = pending.admitted.is_empty() || damaged.is_some();
                if !idle {
                    // Still answered from there until the commit has ended.
                    pending.committing = std::mem::take(&mut pending.admitted);
                }
                let renewed = (!idle).then(|| std::mem::take(&mut pending.renewed));
                (closing, renewed, jobs, damaged)
            };
            let committed = match renewed {
                Some(renewed) => self.commit_pending(renewed),
                None => Ok(()),
            };
            let had_jobs = !jobs.is_empty();
            for job in jobs {
                self.do_job(job);
            }
            if let Err(e) = self.refresh(had_jobs) {
                self.note_damage(e);
            }
            if closing {
                if let Some(why) = damaged {
                    let lost = self.pending().admitted.len();
                    return Err(StoreError::Io {
                        path: self.dir.clone(),
                        action: "commit to",
                        source: std::io::Error::other(format!(
                            "it was found damaged while serving, and nothing was committed since ({lost} keys admitted were not): {why}"
                        )),
                    });
                }
                return committed;
            }
        }
    }

    /// Commits the keys being committed, then merges: counted, told, and
    /// on failure kept for the next commit.
    fn commit_pending(&self, renewed: u64) -> Result<(), StoreError> {
        let started = Instant::now();
        let committed = self.commit(renewed);
        let keys = self.settle(committed.as_ref().err(), renewed);
        // The merges change no answer: lookups go on while they are
        // written, and wait only while each is put in place.
        let merged = committed.and_then(|()| self.merge());
        let merged = merged.map_err(|e| self.note_damage(e));
        let error = merged.as_ref().err().map(ToString::to_string);
        let counter = match &error {
            None => &self.commits,
            Some(why) => {
                self.pending().failing = Some(why.clone());
                &self.failed_commits
            }
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(observer) = &self.observer {
            let took = started.elapsed();
            observer(&Event::Committed(CommitReport { keys, took, error }));
        }
        merged
    }

    /// Does one job of maintenance and sends its answer.
    fn do_job(&self, job: Job) {
        match job {
            Job::Forget(prints, reply) => {
                drop(reply.send(self.unless_damaged(|| self.forget(&prints))))
            }
            Job::Expire(older_than, reply) => {
                let before = self.store().clock().now().minus(older_than);
                drop(reply.send(self.unless_damaged(|| self.compact(Some(before)))));
            }
            Job::Compact(reply) => drop(reply.send(self.unless_damaged(|| self.compact(None)))),
        }
    }

    /// Forgets `prints` (distinct; the committer's, so no commit is under
    /// way): those pending leave the pending set, those the store holds get
    /// a tombstone. Which of them were held. Under the pending lock, so
    /// that no add admits one of them meanwhile (its count would be off).
    fn forget(&self, prints: &[u128]) -> Result<Vec<bool>, StoreError> {
        let mut pending = self.pending();
        let holdings = self.store().holds(prints);
        let holdings = holdings.inspect_err(|e| self.note_damage_locked(&mut pending, e))?;
        let mut tombstones = Vec::new();
        let held = prints
            .iter()
            .zip(&holdings)
            .map(|(&print, &holding)| {
                let was_pending = pending.admitted.remove(&print);
                if let (true, Some(budget)) = (was_pending, &mut pending.budget) {
                    budget.forgot(print);
                }
                // A pending key the store holds expired was counted renewed.
                if was_pending && holding == Holding::Expired {
                    pending.renewed = pending.renewed.saturating_sub(1);
                }
                if holding != Holding::Absent {
                    tombstones.push(print);
                }
                was_pending || holding != Holding::Absent
            })
            .collect();
        tombstones.sort_unstable();
        if !tombstones.is_empty() {
            let mut store = self.store_mut();
            store.stage(tombstones.into_iter(), Staging::Forget)?;
            store.publish_unmerged()?;
        }
        // A request that read the store before this must read it again.
        self.epoch.fetch_add(1, Ordering::Release);
        drop(pending);
        self.merge()?;
        Ok(held)
    }

    /// Merges every run into one, without the keys admitted before
    /// `expire_before`: written while lookups read the store, put in place
    /// under its write lock. `forgotten` is the keys removed.
    fn compact(&self, expire_before: Option<crate::store::Stamp>) -> Result<Committed, StoreError> {
        let keys = self.store().keys();
        let written = self.store().write_compaction(expire_before)?;
        if let Some(written) = written {
            self.store_mut().install_merge(written)?;
            self.epoch.fetch_add(1, Ordering::Release);
        }
        let store = self.store();
        Ok(Committed {
            forgotten: keys - store.keys().min(keys),
            keys: store.keys(),
            runs: store.runs(),
            ..Committed::default()
        })
    }

    /// The pending keys once a commit is due: `due` has come, enough keys
    /// wait, maintenance waits, or the service is closing.
    fn wait_until_due(&self, due: Instant) -> MutexGuard<'_, Pending> {
        let mut pending = self.pending();
        loop {
            let now = Instant::now();
            let ready = pending.closed
                || now >= due
                || !pending.jobs.is_empty()
                || (pending.damaged.is_none()
                    && pending.admitted.len() >= self.settings.pending_keys);
            if ready {
                return pending;
            }
            pending = match self.wake.wait_timeout(pending, due - now) {
                Ok((pending, _)) => pending,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Stages and publishes the keys being committed (under a budget,
    /// each with its site, the sites met since the last commit named).
    fn commit(&self, renewed: u64) -> Result<(), StoreError> {
        let staging = Staging::Admit { renewed };
        let (sited, names) = {
            let mut pending = self.pending();
            let pending = &mut *pending;
            match &mut pending.budget {
                Some(budget) => (
                    budget.sited(pending.committing.iter().copied()),
                    budget.take_names(),
                ),
                None => {
                    let prints = pending.committing.iter().map(|&p| (p, NO_SITE));
                    let mut sited: Vec<(u128, u64)> = prints.collect();
                    sited.sort_unstable_by_key(|&(print, _)| print);
                    (sited, Vec::new())
                }
            }
        };
        let mut store = self.store_mut();
        let published = store
            .stage_sited(sited.into_iter(), staging, names.clone())
            .and_then(|_| store.publish_unmerged());
        if published.is_err()
            && let Some(budget) = &mut self.pending().budget
        {
            budget.keep_names(names);
        }
        published.map(drop)
    }

    /// Under a budget, reads its counts again from the store (after a
    /// forget, an expiry or a compaction, and hourly under a maximum age);
    /// with the system's time, moves the store's clock on first.
    fn refresh(&self, after_job: bool) -> Result<(), StoreError> {
        if !self.settings.fixed_time {
            let mut store = self.store_mut();
            let clock = store.clock();
            let now = Clock::system();
            store.set_clock(clock.max_age().map_or(now, |age| now.with_max_age(age)));
        }
        let mut pending = self.pending();
        let store = self.store();
        match &mut pending.budget {
            Some(budget) if after_job || budget.recount_due(&store) => budget.recount(&store),
            _ => Ok(()),
        }
    }

    /// Ends a commit: its keys leave the pending sets (the store answers
    /// for them now), or if it `failed`, wait for the next one. Returns how
    /// many it had.
    fn settle(&self, failed: Option<&StoreError>, renewed: u64) -> usize {
        let mut pending = self.pending();
        let keys = pending.committing.len();
        // Its table goes, not only its keys: an idle service holds none.
        let mut committed = PrintSet::default();
        match failed {
            None => {
                std::mem::swap(&mut pending.committing, &mut committed);
                pending.failing = None;
                if let Some(budget) = &mut pending.budget {
                    budget.committed(committed.iter());
                }
            }
            Some(e) => {
                let kept = std::mem::take(&mut pending.committing);
                pending.admitted.extend(kept);
                pending.renewed += renewed;
                pending.failing = Some(e.to_string());
            }
        }
        // A request that read the store before this must read it again.
        self.epoch.fetch_add(1, Ordering::Release);
        self.settled.notify_all();
        drop(pending);
        drop(committed);
        keys
    }

    /// Makes the merges the store is due, each written while lookups read
    /// the store, then put in place under its write lock.
    fn merge(&self) -> Result<(), StoreError> {
        loop {
            // The read lock is let go before the write lock is taken.
            let written = self.store().write_due_merge()?;
            let Some(written) = written else {
                return Ok(());
            };
            self.store_mut().install_merge(written)?;
        }
    }
}
