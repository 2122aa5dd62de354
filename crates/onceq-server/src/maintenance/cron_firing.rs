//! Fires due cron runs (`crate::cron::fire`), on every server. Wakes at the
//! earliest next tick the store knows of, when a schedule changes on this
//! server, and at least every `cron_poll_interval` (for schedules changed
//! on other servers): so while a server is up a run fires at most about
//! one poll interval plus one store round trip after its tick.
//!
//! Fairly across projects: each scan takes the due schedules in turns
//! across projects (at most [`PER_PROJECT`] of one), and a project past its
//! firing rate (`cron_project_runs_per_second`, [`crate::cron::fairness`])
//! has its runs left due for a later pass, so the loop's time goes to the
//! others. A project with thousands of due schedules therefore delays
//! another's run by at most one scan's firings, not by its whole backlog;
//! and a scan stops after `SCAN_BUDGET` (200 ms) once its first turn
//! (every project's earliest) has fired, for a fresh one, so a run that
//! comes due meanwhile takes its turn in the next instead of waiting
//! behind the rest of this one (under load a firing takes hundreds of
//! milliseconds, and a scan's share of one project, 20 runs, took 6 s:
//! tests/it/fair_share/all_at_once.rs).
//!
//! Time is the server's clock: tests move a manual clock and call [`pass`].

use std::{
    collections::{HashMap, HashSet},
    time::Duration,
};

use jiff::{SignedDuration, Timestamp};
use onceq_store::StoreError;

use crate::{AppState, cron::fire, metrics::ErrorSource};

/// Schedules fired per store scan; a full batch is followed by another.
const BATCH: u32 = 100;
/// Schedules of one project per scan: a project with many due takes at
/// most this share of a scan, the rest going to other projects' turns.
pub const PER_PROJECT: u32 = 20;
/// Scans one pass makes at most, so a batch that keeps failing cannot
/// hold the loop.
const MAX_SCANS: usize = 10;
/// How long one scan's firings may run before a fresh scan is made.
const SCAN_BUDGET: Duration = Duration::from_millis(200);

/// Runs until shutdown.
pub async fn run(state: AppState) {
    let poll = state.config.cron_poll_interval;
    loop {
        let wait = match pass(&state).await {
            Ok(next_at) => until(next_at, state.clock.now(), poll),
            Err(e) => {
                failed(&state, &e);
                poll
            }
        };
        tokio::select! {
            _ = state.shutdown.cancelled() => break,
            _ = state.cron_wake.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
    tracing::debug!(service = "cron_firing", "stopped");
}

/// How long to sleep: until the next tick, at most `poll`.
fn until(next_at: Option<Timestamp>, now: Timestamp, poll: Duration) -> Duration {
    let Some(next_at) = next_at else { return poll };
    let ahead = next_at.duration_since(now);
    Duration::try_from(ahead).map_or(Duration::ZERO, |d| d.min(poll))
}

fn failed(state: &AppState, e: &StoreError) {
    let unavailable = matches!(e, StoreError::Unavailable(_));
    state
        .metrics
        .db_error(ErrorSource::Maintenance, unavailable);
    if unavailable {
        crate::outage::unavailable("cron_firing", e);
    } else {
        tracing::warn!(service = "cron_firing", error = %e, "cron pass failed; will retry");
    }
}

/// Fires every run due now, project by project in turns, leaving due the
/// runs of a project past its firing rate; answers when to look again (the
/// next tick, or sooner when a throttled project's bucket refills). A run
/// that fails to fire is logged and stays due (the next pass fires it
/// again, as the same run: its dedupe key makes that safe).
pub async fn pass(state: &AppState) -> Result<Option<Timestamp>, StoreError> {
    let fairness = &state.cron_fairness;
    let mut throttled = false;
    for _ in 0..MAX_SCANS {
        let now = state.clock.now();
        let due = state.store().cron_due(now, BATCH, PER_PROJECT).await?;
        let scan_started = std::time::Instant::now();
        // The scan's first turn (each project's earliest due run) is never
        // cut: however slow a firing, every project gets one per scan.
        let first_turn = due
            .due
            .iter()
            .map(|j| j.job.project.as_str())
            .collect::<HashSet<_>>()
            .len();
        let mut cut_short = false;
        let mut fired = 0;
        let mut per_project: HashMap<&str, u32> = HashMap::new();
        let mut held_back: HashSet<&str> = HashSet::new();
        for (i, job) in due.due.iter().enumerate() {
            if i >= first_turn && scan_started.elapsed() > SCAN_BUDGET {
                cut_short = true;
                break;
            }
            let project = job.job.project.as_str();
            *per_project.entry(project).or_default() += 1;
            if held_back.contains(project) || !fairness.take(project, now) {
                held_back.insert(project);
                continue;
            }
            fired += 1;
            match fire::fire(state, job, now).await {
                Ok(fired) => {
                    tracing::debug!(job_id = %job.job.job_id, ?fired, "cron run fired");
                }
                Err(e @ StoreError::Unavailable(_)) => return Err(e),
                Err(e) => {
                    tracing::warn!(job_id = %job.job.job_id, error = %e, "cron run failed to fire; will retry");
                }
            }
        }
        throttled |= !held_back.is_empty();
        // More may be due: a full scan, or a project with its whole share
        // in it that was not held back.
        let more = cut_short
            || due.due.len() == BATCH as usize
            || per_project
                .iter()
                .any(|(p, n)| *n == PER_PROJECT && !held_back.contains(p));
        if !more || fired == 0 {
            return Ok(match (throttled, fairness.refill()) {
                // Held back: look again when a run's worth has refilled
                // (but not more often than every 10 ms).
                (true, Some(refill)) => {
                    let soon = now
                        + SignedDuration::try_from(refill.max(Duration::from_millis(10)))
                            .unwrap_or(SignedDuration::from_millis(10));
                    Some(due.next_at.map_or(soon, |next| next.min(soon)))
                }
                _ => due.next_at,
            });
        }
    }
    Ok(Some(state.clock.now()))
}
