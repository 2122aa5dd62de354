//! `task` targets through the push machinery: a task schedule owns a queue
//! of its project, `cron-task-<hex of its id>`, with one push subscription
//! to the task URL. A run publishes into that queue exactly as a queue
//! schedule does (so it fires once, by the same key); the push dispatcher
//! then delivers it as any push delivery: signed with the subscription's
//! secret, retried with backoff, dead-lettered after the queue's retries,
//! behind the SSRF guard and the operator's push settings. Nothing of the
//! delivery code is copied: the schedule only adds the queue and the
//! subscription, and the delivery tells the run how it ended
//! ([`delivery_ended`]).

use onceq_store::{
    CronRunOutcome, QueueCreate, QueueRef, StoreError, SubscriptionInsert, SubscriptionRecord,
};
use onceq_types::{cron::RunOutcome, push::DEFAULT_MAX_IN_FLIGHT, queue::QueueSettings};

use super::input::TaskDelivery;
use crate::AppState;

/// The prefix of a task schedule's queue.
pub const QUEUE_PREFIX: &str = "cron-task-";

/// The queue a task schedule's runs are published into.
pub fn queue_of(job_id: &str) -> String {
    format!("{QUEUE_PREFIX}{}", job_id.trim_start_matches("cron_"))
}

/// Creates a new task schedule's queue (retrying a failed delivery
/// `delivery.retry` times) and its subscription to `url`, signed with
/// `secret`, each attempt bounded by `delivery.timeout_seconds`.
pub async fn provision(
    state: &AppState,
    project: &str,
    job_id: &str,
    url: &str,
    secret: String,
    delivery: &TaskDelivery,
) -> Result<SubscriptionRecord, StoreError> {
    let queue = QueueRef::new(project, queue_of(job_id));
    let now = state.clock.now();
    state
        .store()
        .queue_create(QueueCreate {
            queue: queue.clone(),
            settings: QueueSettings {
                // Bounded by `MAX_TASK_RETRY` (`input`).
                max_retries: delivery.retry as i32,
                ..QueueSettings::default()
            },
            now,
        })
        .await?;
    state
        .store()
        .subscription_insert(SubscriptionInsert {
            queue,
            url: url.to_owned(),
            secret,
            max_in_flight: DEFAULT_MAX_IN_FLIGHT as i32,
            timeout_seconds: delivery.timeout_seconds as i32,
            now,
        })
        .await
}

/// The secret a task schedule's runs are signed with (its subscription's);
/// `None` while its create is still provisioning it.
pub async fn secret_of(
    state: &AppState,
    project: &str,
    job_id: &str,
) -> Result<Option<String>, StoreError> {
    let queue = QueueRef::new(project, queue_of(job_id));
    match state.store().subscription_list(&queue).await {
        Ok(subs) => Ok(subs.into_iter().next().map(|s| s.secret)),
        Err(StoreError::QueueNotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Removes a deleted task schedule's queue (and so its subscription).
pub async fn unprovision(state: &AppState, project: &str, job_id: &str) -> Result<(), StoreError> {
    match state
        .store()
        .queue_delete(&QueueRef::new(project, queue_of(job_id)))
        .await
    {
        Ok(_) | Err(StoreError::QueueNotFound) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Called by a push delivery that ended for good (acked, or dead-lettered
/// with `error`): when it was a task run's, records the run's outcome.
/// Free for every other delivery: a prefix check.
pub async fn delivery_ended(
    state: &AppState,
    queue: &onceq_store::QueueRef,
    message: &onceq_store::ClaimedMessage,
    error: Option<&str>,
) {
    let idempotency_key = message.idempotency_key.as_deref();
    let Some(rest) = queue.queue.strip_prefix(QUEUE_PREFIX) else {
        return;
    };
    let Some((job_id, tick)) = idempotency_key
        .and_then(|k| k.strip_prefix("cron:"))
        .and_then(|k| k.split_once(':'))
    else {
        return;
    };
    let (Ok(scheduled_at), true) = (tick.parse(), job_id.ends_with(rest)) else {
        return;
    };
    let outcome = CronRunOutcome {
        job_id: job_id.to_owned(),
        scheduled_at,
        message_id: message.message_id.clone(),
        now: state.clock.now(),
        outcome: if error.is_some() {
            RunOutcome::Failed
        } else {
            RunOutcome::Delivered
        },
        error: error.map(|e| e.chars().take(1000).collect()),
    };
    let failed = outcome.error.clone();
    if let Err(e) = state.store().cron_run_outcome(outcome).await {
        tracing::warn!(%job_id, error = %e, "recording a cron task run's outcome failed");
    }
    if let Some(error) = failed {
        let event = crate::webhooks::Event::CronRunFailed {
            schedule_id: job_id.to_owned(),
            error,
        };
        state.emit(&queue.project, event).await;
    }
}
