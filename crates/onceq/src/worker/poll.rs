//! [`Worker::run`]: the long-poll loop, its backpressure, its backoff and
//! its shutdown.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use super::{Worker, WorkerError, runner::guarded};
use crate::Error;

/// Why the loop waits before its next consume.
enum Pause {
    /// The consume failed: jittered, growing backoff.
    Backoff(Duration),
    /// Empty answer without long polling: don't hammer an empty queue.
    Idle(Duration),
}

impl Worker {
    /// Consumes until `shutdown` is cancelled: long polls of `wait_seconds`,
    /// at most `concurrency` jobs at once (a consume asks only for as many
    /// messages as there are free permits), jittered backoff after a failed
    /// consume. On shutdown it stops consuming at once, lets running jobs
    /// finish for up to `shutdown_grace`, then releases the rest (fact
    /// released, message nacked without delay) and returns when every job
    /// has settled.
    ///
    /// Returns an error only for answers a retry cannot fix (bad key, bad
    /// parameters), after settling the running jobs the same way.
    pub async fn run(&self, shutdown: CancellationToken) -> Result<(), WorkerError> {
        let config = &self.inner.config;
        tracing::info!(queue = %config.queue, worker_id = %config.worker_id, "worker started");
        let tracker = TaskTracker::new();
        let abandon = CancellationToken::new();
        let polled = self.poll(&shutdown, &tracker, &abandon).await;
        tracker.close();
        let grace = config.shutdown_grace;
        if tokio::time::timeout(grace, tracker.wait()).await.is_err() {
            tracing::warn!(
                jobs = tracker.len(),
                ?grace,
                "shutdown grace over: releasing the jobs still running"
            );
            abandon.cancel();
            tracker.wait().await;
        }
        tracing::info!(queue = %config.queue, worker_id = %config.worker_id, "worker stopped");
        polled
    }

    async fn poll(
        &self,
        shutdown: &CancellationToken,
        tracker: &TaskTracker,
        abandon: &CancellationToken,
    ) -> Result<(), WorkerError> {
        let inner = &self.inner;
        let config = &inner.config;
        // Consecutive failed polls, and consecutive empty ones when not
        // long polling: each drives its own backoff.
        let (mut failures, mut idle) = (0u32, 0u32);
        loop {
            // Backpressure: no consume until a job slot is free, and never
            // ask for more messages than there are free slots.
            let first = tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(()),
                p = inner.permits.clone().acquire_owned() => p.expect("the worker never closes its semaphore"),
            };
            let mut permits = vec![first];
            while permits.len() < config.batch as usize {
                match inner.permits.clone().try_acquire_owned() {
                    Ok(p) => permits.push(p),
                    Err(_) => break,
                }
            }
            // Dropping a long poll on shutdown is safe: a message the server
            // claimed for it meanwhile comes back when its lease ends.
            let polled = tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(()),
                r = inner.consume(permits.len() as u32, config.wait_seconds) => r,
            };
            let pause = match polled {
                Ok(messages) => {
                    failures = 0;
                    let empty = messages.is_empty() && config.wait_seconds == 0;
                    idle = if empty { idle.saturating_add(1) } else { 0 };
                    for (message, permit) in messages.into_iter().zip(permits) {
                        tracker.spawn(guarded(inner.clone(), message, abandon.clone(), permit));
                    }
                    (idle > 0).then(|| Pause::Idle(config.poll_backoff.delay(idle)))
                }
                Err(e @ (Error::Unauthorized(_) | Error::InvalidParams(_) | Error::Config(_))) => {
                    tracing::error!(queue = %config.queue, error = %e, "consume refused; worker stops");
                    return Err(e.into());
                }
                Err(e) => {
                    failures = failures.saturating_add(1);
                    let retry_after = e.retry_after().unwrap_or_default();
                    let wait = config.poll_backoff.delay(failures).max(retry_after);
                    inner.counters.poll_failed();
                    tracing::warn!(queue = %config.queue, error = %e, failures, ?wait, "consume failed; backing off");
                    Some(Pause::Backoff(wait))
                }
            };
            let Some(pause) = pause else { continue };
            let (wait, backoff) = match pause {
                Pause::Backoff(wait) => (wait, true),
                Pause::Idle(wait) => (wait, false),
            };
            let slept = Instant::now();
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return Ok(()),
                () = tokio::time::sleep(wait) => {}
            }
            if backoff {
                // Measured, not planned: what a test of "no spinning" needs.
                inner.counters.backed_off(slept.elapsed());
            }
        }
    }
}
