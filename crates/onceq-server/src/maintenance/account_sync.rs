//! Writes this server's usage, records its heartbeat, and re-reads the
//! projects' credit limits, spend and rate limits: every
//! `account_sync_interval` (1 s), and once more after the HTTP server has
//! drained at shutdown.

use std::collections::HashMap;

use jiff::SignedDuration;
use onceq_store::{ServerHeartbeat, StoreError};

use crate::AppState;

/// A server not heard from for this many sync intervals is gone.
pub const LIVE_INTERVALS: u32 = 3;

/// Runs until shutdown. The final write is [`shutdown`]'s, after requests
/// have drained.
pub async fn run(state: AppState) {
    let interval = state.config.account_sync_interval;
    super::every("account_sync", &state, interval, || pass(&state)).await;
}

/// One sync: write usage, heartbeat, refresh.
pub async fn pass(state: &AppState) -> Result<(), StoreError> {
    let _one_at_a_time = state.accounts.sync_lock.lock().await;
    flush(state).await?;
    let accounts = &state.accounts;
    let now = state.clock.now();
    let window = state.config.account_sync_interval * LIVE_INTERVALS;
    let live = state
        .store()
        .server_heartbeat(ServerHeartbeat {
            server_id: accounts.server_id.clone(),
            now,
            live_after: now - SignedDuration::try_from(window).unwrap_or(SignedDuration::MAX),
        })
        .await?;
    accounts.limiter.set_servers(live);
    // Read after this server's writes committed: the spend includes them.
    let projects = state.store().project_list().await?;
    accounts.ledger.refreshed(&projects);
    let limits: HashMap<_, _> = projects
        .into_iter()
        .filter_map(|p| Some((p.name, p.rate?)))
        .collect();
    accounts.limiter.refresh(limits, now);
    Ok(())
}

/// Writes the unwritten usage; on failure it is kept for the next try.
pub async fn flush(state: &AppState) -> Result<(), StoreError> {
    let _gate = state.accounts.flush_gate.write().await;
    let rows = state.accounts.ledger.take();
    if rows.is_empty() {
        return Ok(());
    }
    // If the outcome is unknown (the connection broke at COMMIT) the rows
    // are written again next time: usage may then count twice, never be
    // lost (docs/security.md).
    if let Err(e) = state.store().usage_flush(rows.clone()).await {
        state.accounts.ledger.untake(rows);
        return Err(e);
    }
    Ok(())
}

/// At shutdown, after the last request: the final write, and leaving the
/// heartbeat table so the other servers take over the whole limits soon.
pub async fn shutdown(state: &AppState) {
    let _one_at_a_time = state.accounts.sync_lock.lock().await;
    if let Err(e) = flush(state).await {
        tracing::error!(error = %e, "could not write the last usage at shutdown");
    }
    if let Err(e) = state.store().server_leave(&state.accounts.server_id).await {
        tracing::warn!(error = %e, "could not remove this server's heartbeat");
    }
}
