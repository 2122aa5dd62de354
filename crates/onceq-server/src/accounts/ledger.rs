//! Usage and credit, counted in memory.
//!
//! Every call adds to a bucket `(project, capability, minute)` in this
//! process; [`Ledger::take`] hands the buckets to the account sync, which
//! writes them with one statement about once a second. Requests never
//! touch the database for metering.
//!
//! Credit: a project's spend as this process knows it is
//! `db_spent + flushing + pending` — what the store said at the last
//! refresh, plus what this process wrote since (until a refresh includes
//! it), plus what it has not written yet. A billable call first reserves
//! its price ([`Ledger::reserve`]); it is admitted only if
//! `known spend + reservations + price <= limit`, so one server never lets
//! a project spend past its limit, however many calls race. The
//! reservation is released when the call ends, and what it really cost
//! (less for replays) is added to the pending spend at the same moment.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard},
};

use jiff::Timestamp;
use onceq_store::{ProjectRecord, UsageRow, UsageTotal};

/// Counts of one bucket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Successful calls.
    pub calls: u64,
    /// Calls that cost something.
    pub billable_calls: u64,
    /// Their cost, micro-USD.
    pub cost_micros: u64,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.calls += o.calls;
        self.billable_calls += o.billable_calls;
        self.cost_micros += o.cost_micros;
    }
}

#[derive(Debug, Default)]
struct Project {
    /// Credit limit, from the last refresh.
    limit: Option<u64>,
    /// Spend stored, as of the last refresh.
    db_spent: u64,
    /// Written by this process since the last refresh.
    flushing: u64,
    /// Cost in `buckets`, not written yet.
    pending: u64,
    /// Held by calls in progress.
    reserved: u64,
    /// Not written yet: `(capability, minute start in seconds)`.
    buckets: HashMap<(&'static str, i64), Counts>,
}

impl Project {
    fn known_spend(&self) -> u64 {
        self.db_spent + self.flushing + self.pending
    }
}

/// The project cannot afford the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimit {
    /// The project's limit, micro-USD.
    pub limit: u64,
    /// What it spent and holds, micro-USD.
    pub spent: u64,
}

/// This process's usage and credit view.
#[derive(Debug, Default)]
pub struct Ledger {
    projects: Mutex<HashMap<String, Project>>,
}

/// The minute a time falls in, as seconds since the epoch.
pub fn minute_of(t: Timestamp) -> i64 {
    t.as_second().div_euclid(60) * 60
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Project>> {
        // A panic while holding this lock leaves plain counters behind;
        // keep serving with them rather than poisoning every request.
        self.projects.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Holds `micros` for a call of `project`, if its limit allows.
    pub fn reserve(&self, project: &str, micros: u64) -> Result<(), OverLimit> {
        if micros == 0 {
            return Ok(());
        }
        let mut projects = self.lock();
        let p = entry(&mut projects, project);
        if let Some(limit) = p.limit {
            let spent = p.known_spend() + p.reserved;
            if spent.saturating_add(micros) > limit {
                return Err(OverLimit { limit, spent });
            }
        }
        p.reserved += micros;
        Ok(())
    }

    /// A project's limit and what it has spent and holds, micro-USD; `None`
    /// when it has no limit (what `credit.exhausted` reports).
    pub fn standing(&self, project: &str) -> Option<OverLimit> {
        let mut projects = self.lock();
        let p = entry(&mut projects, project);
        p.limit.map(|limit| OverLimit {
            limit,
            spent: p.known_spend() + p.reserved,
        })
    }

    /// Ends a call: releases `reserved` and counts it in its minute.
    pub fn settle(
        &self,
        project: &str,
        capability: &'static str,
        now: Timestamp,
        reserved: u64,
        counts: Counts,
    ) {
        if reserved == 0 && counts == Counts::default() {
            return;
        }
        let mut projects = self.lock();
        let p = entry(&mut projects, project);
        p.reserved = p.reserved.saturating_sub(reserved);
        if counts != Counts::default() {
            p.pending += counts.cost_micros;
            p.buckets
                .entry((capability, minute_of(now)))
                .or_default()
                .add(counts);
        }
    }

    /// Takes every unwritten bucket, for the account sync to write. Their
    /// cost counts as `flushing` until [`Ledger::refreshed`] (or
    /// [`Ledger::untake`] if the write failed).
    pub fn take(&self) -> Vec<UsageRow> {
        let mut rows = Vec::new();
        for (name, p) in self.lock().iter_mut() {
            p.flushing += std::mem::take(&mut p.pending);
            for ((capability, minute), c) in p.buckets.drain() {
                rows.push(UsageRow {
                    project: name.clone(),
                    capability: capability.to_owned(),
                    minute: Timestamp::from_second(minute).unwrap_or_default(),
                    calls: c.calls,
                    billable_calls: c.billable_calls,
                    cost_micros: c.cost_micros,
                });
            }
        }
        rows
    }

    /// Puts back buckets whose write failed; the next sync retries them.
    pub fn untake(&self, rows: Vec<UsageRow>) {
        let mut projects = self.lock();
        for r in rows {
            let Some(capability) = onceq_types::capability::capability(&r.capability) else {
                continue;
            };
            let p = entry(&mut projects, &r.project);
            p.flushing = p.flushing.saturating_sub(r.cost_micros);
            p.pending += r.cost_micros;
            p.buckets
                .entry((capability.id, r.minute.as_second()))
                .or_default()
                .add(Counts {
                    calls: r.calls,
                    billable_calls: r.billable_calls,
                    cost_micros: r.cost_micros,
                });
        }
    }

    /// Takes the store's view of every project, read after every earlier
    /// write of this process committed: it includes all `flushing` spend.
    pub fn refreshed(&self, stored: &[ProjectRecord]) {
        let mut projects = self.lock();
        for p in projects.values_mut() {
            p.limit = None;
            p.db_spent = 0;
            p.flushing = 0;
        }
        for rec in stored {
            // Only projects with a limit need their spend in memory.
            if rec.credit_limit_micros.is_none() && !projects.contains_key(&rec.name) {
                continue;
            }
            let p = entry(&mut projects, &rec.name);
            p.limit = rec.credit_limit_micros;
            p.db_spent = rec.spent_micros;
        }
        // Forget projects with nothing to remember.
        projects.retain(|_, p| {
            p.limit.is_some() || p.reserved > 0 || p.pending > 0 || !p.buckets.is_empty()
        });
    }

    /// This process's unwritten usage of `project` in minutes
    /// `from <= minute < to`, per capability.
    pub fn unwritten(&self, project: &str, from: Timestamp, to: Timestamp) -> Vec<UsageTotal> {
        let projects = self.lock();
        let Some(p) = projects.get(project) else {
            return Vec::new();
        };
        let mut by_cap: HashMap<&'static str, Counts> = HashMap::new();
        for ((cap, minute), c) in &p.buckets {
            if (from.as_second()..to.as_second()).contains(minute) {
                by_cap.entry(cap).or_default().add(*c);
            }
        }
        by_cap
            .into_iter()
            .map(|(cap, c)| UsageTotal {
                capability: cap.to_owned(),
                calls: c.calls,
                billable_calls: c.billable_calls,
                cost_micros: c.cost_micros,
            })
            .collect()
    }

    /// This process's unwritten spend of `project`, micro-USD.
    pub fn unwritten_spend(&self, project: &str) -> u64 {
        self.lock().get(project).map_or(0, |p| p.pending)
    }
}

fn entry<'a>(projects: &'a mut HashMap<String, Project>, name: &str) -> &'a mut Project {
    if !projects.contains_key(name) {
        projects.insert(name.to_owned(), Project::default());
    }
    projects.get_mut(name).expect("just inserted")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn paid(cost: u64) -> Counts {
        Counts {
            calls: 1,
            billable_calls: u64::from(cost > 0),
            cost_micros: cost,
        }
    }

    fn limited(limit: u64, spent: u64) -> ProjectRecord {
        ProjectRecord {
            name: "p".into(),
            created_at: t(0),
            credit_limit_micros: Some(limit),
            spent_micros: spent,
            rate: None,
        }
    }

    #[test]
    fn reservations_keep_one_process_within_the_limit() {
        let l = Ledger::default();
        l.refreshed(&[limited(100, 40)]);
        l.reserve("p", 30).unwrap();
        l.reserve("p", 30).unwrap();
        assert_eq!(
            l.reserve("p", 1),
            Err(OverLimit {
                limit: 100,
                spent: 100
            })
        );
        // a replay: reserved 30, cost nothing
        l.settle("p", "queue.publish", t(0), 30, paid(0));
        l.reserve("p", 30).unwrap();
        l.settle("p", "queue.publish", t(0), 30, paid(30));
        l.settle("p", "queue.publish", t(0), 30, paid(30));
        assert!(l.reserve("p", 1).is_err());
        assert_eq!(l.unwritten_spend("p"), 60);
        // free calls always pass
        l.reserve("p", 0).unwrap();
    }

    #[test]
    fn take_untake_refresh_never_forget_spend() {
        let l = Ledger::default();
        l.refreshed(&[limited(100, 0)]);
        l.reserve("p", 60).unwrap();
        l.settle("p", "queue.publish", t(0), 60, paid(60));
        let rows = l.take();
        assert_eq!(rows.len(), 1);
        // while being written, the spend still counts
        assert!(l.reserve("p", 41).is_err());
        l.untake(rows);
        assert!(l.reserve("p", 41).is_err());
        let rows = l.take();
        assert_eq!(rows[0].cost_micros, 60);
        // the store now has it
        l.refreshed(&[limited(100, 60)]);
        assert!(l.reserve("p", 41).is_err());
        l.reserve("p", 40).unwrap();
    }

    #[test]
    fn buckets_by_minute_and_range() {
        let l = Ledger::default();
        l.settle("p", "queue.list", t(0), 0, paid(0));
        l.settle("p", "queue.list", t(59), 0, paid(0));
        l.settle("p", "queue.list", t(61), 0, paid(0));
        let minute0 = Timestamp::from_second(minute_of(t(0))).unwrap();
        let all = l.unwritten("p", minute0, t(3600));
        assert_eq!(all[0].calls, 3);
        let first = l.unwritten("p", minute0, minute0 + jiff::SignedDuration::from_secs(60));
        assert_eq!(first[0].calls, 2);
        assert_eq!(l.take().len(), 2);
        assert!(l.unwritten("p", minute0, t(3600)).is_empty());
    }
}
