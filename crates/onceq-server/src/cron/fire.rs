//! Firing one due run, exactly once however many servers fire it.
//!
//! A run is the pair (schedule, tick). Firing it:
//! 1. publishes the schedule's message with the dedupe key
//!    `cron:<job_id>:<tick>` (so a second firing of the run, by another
//!    server at the same moment or by any server after a crash between
//!    steps 1 and 2, is a replay: the store holds one message);
//! 2. advances the schedule past the tick with a compare and set on its
//!    next tick, recording the run in the same transaction (so one firing
//!    records it; the others change nothing).
//!
//! A server killed between 1 and 2 leaves the tick due: the next pass (its
//! own after a restart, or any other server's) fires the same key again,
//! which is a replay, and advances. The dedupe window (24 h by default) is
//! the bound: a tick left due longer than that by a server killed exactly
//! there would publish again (docs/guarantees.md).

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    CronAdvance, CronRecord, CronRunRecord, CronTarget, MessageGet, NewMessage, QueueRef,
    StoreError,
};
use onceq_types::{
    MessageStatus,
    cron::{OverlapPolicy, RunOutcome, dedupe_key},
};

use super::input;
use crate::AppState;

/// What firing a due schedule did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fired {
    /// This server advanced the schedule (and recorded the run).
    Advanced(RunOutcome),
    /// Another firing of the same tick advanced it first.
    Lost,
}

/// Fires `job`'s due tick at `now` (see the module doc).
pub async fn fire(state: &AppState, job: &CronRecord, now: Timestamp) -> Result<Fired, StoreError> {
    let Some(scheduled) = job.next_run_at else {
        return Ok(Fired::Lost);
    };
    let next = match next_tick(job, now) {
        Ok(next) => next,
        Err(why) => {
            // A stored schedule that no longer parses (its zone left the
            // tzdb): end it, saying why, rather than retry it every pass.
            tracing::warn!(job_id = %job.job.job_id, error = %why, "cron schedule ended: it no longer parses");
            let event = crate::webhooks::Event::CronRunFailed {
                schedule_id: job.job.job_id.clone(),
                error: why.clone(),
            };
            state.emit(&job.job.project, event).await;
            return advance(
                state,
                job,
                scheduled,
                None,
                false,
                run(scheduled, now, None, RunOutcome::Failed, Some(why)),
            )
            .await;
        }
    };
    // A task run is published into the schedule's own queue, whose push
    // subscription delivers it (`super::task`).
    let queue = match &job.spec.target {
        CronTarget::Queue(queue) => queue.clone(),
        CronTarget::Task(_) => super::task::queue_of(&job.job.job_id),
    };
    let queue = QueueRef::new(job.job.project.clone(), queue);
    if job.spec.overlap_policy == OverlapPolicy::Skip && previous_held(state, job, &queue).await? {
        let skipped = run(scheduled, now, None, RunOutcome::Skipped, None);
        // A skipped run does not count toward max_runs: the schedule goes on.
        return advance(state, job, scheduled, next, false, skipped).await;
    }
    let message_id = publish(state, job, &queue, scheduled).await?;
    let next = if reaches_max(job) { None } else { next };
    let published = run(scheduled, now, message_id, RunOutcome::Published, None);
    advance(state, job, scheduled, next, true, published).await
}

/// The tick after this one: the first one after `now`, so ticks missed
/// while no server was up collapse into the one firing now.
fn next_tick(job: &CronRecord, now: Timestamp) -> Result<Option<Timestamp>, String> {
    let schedule = input::parsed(&job.spec).map_err(|e| e.message().to_owned())?;
    let after = job.next_run_at.map_or(now, |t| t.max(now));
    schedule.next_after(after).map_err(|e| e.0)
}

/// Whether this run, counted, is the schedule's last.
fn reaches_max(job: &CronRecord) -> bool {
    job.spec
        .max_runs
        .is_some_and(|max| job.run_count + 1 >= max)
}

/// Whether the previous run's message is still held (waiting or in flight).
async fn previous_held(
    state: &AppState,
    job: &CronRecord,
    queue: &QueueRef,
) -> Result<bool, StoreError> {
    let Some(message_id) = job.last_message_id.clone() else {
        return Ok(false);
    };
    let found = state
        .messages()
        .get(MessageGet {
            queue: queue.clone(),
            message_id,
            now: state.clock.now(),
        })
        .await;
    match found {
        Ok(Some(m)) => Ok(matches!(
            m.status,
            MessageStatus::Available | MessageStatus::Delayed | MessageStatus::InFlight
        )),
        Ok(None) | Err(StoreError::QueueNotFound) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Publishes the run's message; its id (`None` when the key was used with
/// another payload: the schedule was updated between a crashed firing and
/// this one, and the first firing's message stands).
async fn publish(
    state: &AppState,
    job: &CronRecord,
    queue: &QueueRef,
    scheduled: Timestamp,
) -> Result<Option<String>, StoreError> {
    let window = SignedDuration::try_from(state.config.dedupe_window)
        .unwrap_or(SignedDuration::from_hours(24));
    let message = NewMessage {
        payload: job.spec.payload.clone(),
        delay: SignedDuration::ZERO,
        priority: 0,
        idempotency_key: Some(dedupe_key(&job.job.job_id, scheduled)),
        group_id: None,
        headers: job.spec.headers.clone(),
        hand_out: None,
    };
    match state.messages().publish(queue, vec![message], window).await {
        Ok(mut outcomes) => Ok(outcomes.pop().map(|o| o.message_id)),
        Err(StoreError::IdempotencyKeyReused { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

fn run(
    scheduled_at: Timestamp,
    fired_at: Timestamp,
    message_id: Option<String>,
    outcome: RunOutcome,
    error: Option<String>,
) -> CronRunRecord {
    CronRunRecord {
        scheduled_at,
        fired_at,
        message_id,
        outcome,
        error,
    }
}

async fn advance(
    state: &AppState,
    job: &CronRecord,
    scheduled: Timestamp,
    next: Option<Timestamp>,
    counted: bool,
    run: CronRunRecord,
) -> Result<Fired, StoreError> {
    let outcome = run.outcome;
    let advanced = state
        .store()
        .cron_advance(CronAdvance {
            job_id: job.job.job_id.clone(),
            scheduled_at: scheduled,
            next_run_at: next,
            counted,
            run,
        })
        .await?;
    Ok(if advanced {
        Fired::Advanced(outcome)
    } else {
        Fired::Lost
    })
}
