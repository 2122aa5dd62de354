//! The report a run prints, and whether it passed.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::check::Findings;
use crate::drain::Drained;
use crate::faults::Kind;
use crate::latency::{Bound, Phase};
use crate::logs::WorkerLog;

/// How many offending keys each list shows.
const SHOW: usize = 20;

/// The victim's latency: over the whole load (`with` only), or before and
/// with the hostile tenant, and the bound between them.
#[derive(Debug, Clone, Copy, Default)]
pub struct VictimLatency {
    /// Before the hostile tenant arrived (with `--hostile`).
    pub before: Option<Phase>,
    /// With it there (or the whole load without one).
    pub with: Phase,
    /// The bound `with` must stay within (with `--hostile`).
    pub bound: Option<Bound>,
}

impl VictimLatency {
    /// Whether the bound holds; `None` without a hostile tenant.
    pub fn bound_met(&self) -> Option<bool> {
        Some(self.bound?.met(&self.with))
    }
}

/// Everything a run measured and found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One line describing the setup.
    pub setup: String,
    /// Distinct requests (keys).
    pub requests: u64,
    /// How long the load ran.
    pub load_elapsed: Duration,
    /// HTTP sends in all.
    pub sends: u64,
    /// Keys double-tapped / impatient / re-sent after their 202.
    pub double_taps: u64,
    /// Keys whose first sends had a short timeout.
    pub impatient: u64,
    /// Keys re-sent after their 202.
    pub replays_asked: u64,
    /// Client timeouts, connection errors, 5xx, 409 answers, 202 answers.
    pub timeouts: u64,
    /// Sends that reached no API.
    pub conn_errors: u64,
    /// 5xx answers.
    pub server_errors: u64,
    /// 409 answers.
    pub in_flight: u64,
    /// 202 answers.
    pub accepted: u64,
    /// 202 answers marked `Idempotent-Replayed: true`.
    pub replays_answered: u64,
    /// Faults by kind.
    pub faults: Vec<(Kind, u64)>,
    /// Connections the proxy cuts closed.
    pub connections_cut: u64,
    /// The longest failover, from the kill of the primary.
    pub failover_longest: crate::cluster::FailoverTimes,
    /// Process restarts (after kills and after exits of their own).
    pub restarts: u64,
    /// Workers whose work outlasts their lease, and the numbers.
    pub slow_workers: String,
    /// Redeliveries the sampler saw (sum of delivery_count − 1).
    pub redeliveries: u64,
    /// Messages the sampler saw redelivered.
    pub redelivered_messages: usize,
    /// What the workers logged.
    pub worker_log: WorkerLog,
    /// The drain.
    pub drained: Drained,
    /// The check.
    pub findings: Findings,
    /// The cron scenario's count.
    pub cron: crate::cron::Findings,
    /// The victim's latency.
    pub latency: VictimLatency,
    /// The hostile tenant, with `--hostile`.
    pub hostile: Option<crate::hostile::Findings>,
    /// Where the logs are.
    pub run_dir: PathBuf,
}

impl Report {
    /// Keys lost.
    pub fn lost(&self) -> u64 {
        self.findings.lost_count()
    }

    /// Keys duplicated (plus untraceable rows).
    pub fn duplicated(&self) -> u64 {
        self.findings.duplicated_count()
    }

    /// Nothing lost, nothing duplicated, nothing else broken, drained.
    /// With `--hostile`, the victim's latency also within its bound.
    pub fn passed(&self) -> bool {
        self.findings.passed()
            && self.drained.settled
            && self.cron.passed()
            && self.latency.bound_met() != Some(false)
    }

    /// Faults of `kind` injected.
    pub fn faults_of(&self, kind: Kind) -> u64 {
        self.faults
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0, |(_, n)| *n)
    }
}

fn list<T: fmt::Debug>(f: &mut fmt::Formatter<'_>, what: &str, items: &[T]) -> fmt::Result {
    if items.is_empty() {
        return Ok(());
    }
    writeln!(f, "  {what} ({}):", items.len())?;
    for i in items.iter().take(SHOW) {
        writeln!(f, "    {i:?}")?;
    }
    if items.len() > SHOW {
        writeln!(f, "    … and {} more", items.len() - SHOW)?;
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = &self.findings;
        writeln!(f, "onceq chaos report")?;
        writeln!(f, "  setup: {}", self.setup)?;
        writeln!(
            f,
            "  requests: {} (load {:.1}s)",
            self.requests,
            self.load_elapsed.as_secs_f64()
        )?;
        writeln!(
            f,
            "  duplicates sent: {} (sends {}; double taps {}, impatient {}, re-sent after 202 {})",
            self.sends.saturating_sub(self.requests),
            self.sends,
            self.double_taps,
            self.impatient,
            self.replays_asked
        )?;
        writeln!(
            f,
            "  answers: 202 {}, 409 {}, 5xx {}, client timeouts {}, connection errors {}",
            self.accepted, self.in_flight, self.server_errors, self.timeouts, self.conn_errors
        )?;
        writeln!(
            f,
            "  replays answered (Idempotent-Replayed): {}",
            self.replays_answered
        )?;
        let total: u64 = self.faults.iter().map(|(_, n)| n).sum();
        writeln!(f, "  faults injected: {total}")?;
        for (kind, n) in &self.faults {
            writeln!(f, "    {kind}: {n}")?;
        }
        writeln!(
            f,
            "    connections cut by the proxies: {}",
            self.connections_cut
        )?;
        if self.faults_of(Kind::Failover) > 0 {
            let t = &self.failover_longest;
            writeln!(
                f,
                "    failovers, longest: standby promoted {:.1}s after the kill, a new synchronous standby {:.1}s after",
                t.promoted.as_secs_f64(),
                t.synchronous_again.as_secs_f64()
            )?;
        }
        writeln!(f, "    process restarts: {}", self.restarts)?;
        writeln!(f, "    leases shorter than the work: {}", self.slow_workers)?;
        let mut outcomes: Vec<_> = self.worker_log.outcomes.iter().collect();
        outcomes.sort();
        writeln!(
            f,
            "  redeliveries seen: {} ({} messages; worker logs: {} repeat hand-outs, {} leases lost while busy, outcomes {:?})",
            self.redeliveries,
            self.redelivered_messages,
            self.worker_log.repeats,
            self.worker_log.leases_lost,
            outcomes
        )?;
        writeln!(
            f,
            "  drain: {:.1}s, {}, dead letters redriven {}",
            self.drained.elapsed.as_secs_f64(),
            if self.drained.settled {
                "queue empty"
            } else {
                "DID NOT SETTLE"
            },
            self.drained.redriven
        )?;
        writeln!(
            f,
            "  left: queue {}, DLQ {} with their export built (explained), DLQ {} unexplained",
            x.left_in_queue, x.dlq_explained, x.dlq_unexplained
        )?;
        writeln!(f, "  exports built: {}", x.exports_built)?;
        writeln!(
            f,
            "  keys never answered 202 (client deadline): {}",
            x.unanswered.len()
        )?;
        writeln!(f, "  lost: {}", self.lost())?;
        writeln!(f, "  duplicated: {}", self.duplicated())?;
        list(f, "lost keys (202, no export)", &x.lost)?;
        list(f, "duplicated keys (key, rows)", &x.duplicated)?;
        list(f, "rows traced to no request (job_fact)", &x.stray_rows)?;
        if x.foreign_fact_rows > 0 {
            writeln!(
                f,
                "  rows built under a job fact that is not export:<key>: {}",
                x.foreign_fact_rows
            )?;
        }
        list(f, "rows for keys never answered 202", &x.unpromised)?;
        list(f, "keys whose 202s disagree on message_id", &x.disagreeing)?;
        list(f, "unexpected answers", &x.odd_answers)?;
        list(f, "job facts vs exports", &x.fact_mismatches)?;
        list(f, "job facts still running", &x.facts_running)?;
        list(f, "ledger vs client", &x.ledger_mismatches)?;
        if !x.ledger_unrecorded.is_empty() {
            writeln!(
                f,
                "  ledger entries left in flight (202 sent, recording failed; a retry reruns, deduped by the publish key): {}",
                x.ledger_unrecorded.len()
            )?;
        }
        let c = &self.cron;
        writeln!(
            f,
            "  cron: {} schedule(s) (every 1 s, every 2 s); ticks fired {}, messages {}; runs per tick: min {}, max {}{}",
            c.schedules,
            c.ticks_fired,
            c.messages,
            c.min_per_tick,
            c.max_per_tick,
            if c.max_per_tick == 1 && c.min_per_tick == 1 {
                " (exactly one each)"
            } else {
                ""
            }
        )?;
        writeln!(
            f,
            "  cron: runs lost {}, duplicated ticks {}, stray messages {}; collapsed (no server could fire) {}, half-fired at the check {}",
            c.lost,
            c.duplicated.len(),
            c.stray,
            c.collapsed,
            c.half_fired
        )?;
        list(
            f,
            "cron ticks published twice (job, tick, messages)",
            &c.duplicated,
        )?;
        writeln!(f, "  cron: runs published late by {}", c.lateness)?;
        let l = &self.latency;
        match &l.before {
            None => writeln!(
                f,
                "  victim latency: send → 202 {}; key's first send → its first 202 {}",
                l.with.sends, l.with.keys
            )?,
            Some(before) => {
                writeln!(
                    f,
                    "  victim latency (send → 202; key's first send → its first 202):"
                )?;
                writeln!(
                    f,
                    "    before the hostile tenant: sends {}; keys {}",
                    before.sends, before.keys
                )?;
                writeln!(
                    f,
                    "    with it:                   sends {}; keys {}",
                    l.with.sends, l.with.keys
                )?;
            }
        }
        if let (Some(bound), Some(met)) = (l.bound, l.bound_met()) {
            writeln!(
                f,
                "    bound: {bound}: {}",
                if met { "met" } else { "MISSED" }
            )?;
        }
        if let Some(h) = &self.hostile {
            writeln!(f, "{h}")?;
        }
        writeln!(f, "  logs: {}", self.run_dir.display())?;
        write!(
            f,
            "  result: {}",
            if self.passed() { "PASS" } else { "FAIL" }
        )
    }
}
