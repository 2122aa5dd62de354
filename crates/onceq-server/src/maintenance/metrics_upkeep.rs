//! Folds recorded latency samples into their histograms. Each request adds
//! a sample to a lock-free buffer that a scrape drains; on a server nobody
//! scrapes, this pass keeps that buffer from growing without bound.

use std::time::Duration;

use crate::AppState;

/// How often samples are folded.
const INTERVAL: Duration = Duration::from_secs(5);

/// Runs until shutdown.
pub async fn run(state: AppState) {
    super::every("metrics_upkeep", &state.clone(), INTERVAL, || {
        state.metrics.upkeep();
        std::future::ready(Ok(()))
    })
    .await;
}
