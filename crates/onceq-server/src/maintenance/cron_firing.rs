//! Fires due cron runs (`crate::cron::fire`), on every server. Wakes at the
//! earliest next tick the store knows of, when a schedule changes on this
//! server, and at least every `cron_poll_interval` (for schedules changed
//! on other servers): so while a server is up a run fires at most about
//! one poll interval plus one store round trip after its tick.
//!
//! Time is the server's clock: tests move a manual clock and call [`pass`].

use std::time::Duration;

use jiff::Timestamp;
use onceq_store::StoreError;

use crate::{AppState, cron::fire, metrics::ErrorSource};

/// Schedules fired per store scan; a full batch is followed by another.
const BATCH: u32 = 100;
/// Scans one pass makes at most, so a batch that keeps failing cannot
/// hold the loop.
const MAX_SCANS: usize = 10;

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

/// Fires every run due now; answers when the next one is due. A run that
/// fails to fire is logged and stays due (the next pass fires it again,
/// as the same run: its dedupe key makes that safe).
pub async fn pass(state: &AppState) -> Result<Option<Timestamp>, StoreError> {
    for _ in 0..MAX_SCANS {
        let now = state.clock.now();
        let due = state.store().cron_due(now, BATCH).await?;
        let full = due.due.len() == BATCH as usize;
        for job in &due.due {
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
        if !full {
            return Ok(due.next_at);
        }
    }
    Ok(Some(state.clock.now()))
}
