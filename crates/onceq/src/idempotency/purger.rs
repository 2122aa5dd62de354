//! [`spawn_purger`]: the background task that keeps the ledger from growing
//! for ever (hole 8).

use std::{sync::Arc, time::Duration};

use tokio::{task::JoinHandle, time::MissedTickBehavior};
use tokio_util::sync::CancellationToken;

use super::ledger::Ledger;
use crate::clock::Clock;

/// Deletes expired ledger entries now and then every `every`, until
/// `shutdown` is cancelled. Expired entries already count as absent, so the
/// purger only reclaims space: a late or failed pass changes no answer.
///
/// # Panics
///
/// When `every` is zero.
pub fn spawn_purger(
    ledger: Arc<dyn Ledger>,
    every: Duration,
    clock: Clock,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    let mut tick = tokio::time::interval(every);
    // After a slow pass, wait a full period rather than catch up in a burst.
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            match ledger.purge_expired(clock.now()).await {
                Ok(0) => {}
                Ok(n) => tracing::debug!(purged = n, "expired idempotency entries purged"),
                // Retried at the next tick; nothing depends on this pass.
                Err(e) => tracing::warn!(error = %e, "purging the request ledger failed"),
            }
        }
    })
}
