//! `onceq serve`.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use clap::Args;
use onceq_server::{ServerConfig, pricing::PriceTable, serve::ServeOptions};
use onceq_store::RateLimit;

use super::StoreArgs;

/// Flags of `onceq serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ONCEQ_LISTEN", default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    #[command(flatten)]
    store: StoreArgs,
    /// Accept this API key for project "default" (stored hashed).
    #[arg(long, env = "ONCEQ_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// How long publish idempotency keys are remembered, in seconds.
    #[arg(long, env = "ONCEQ_DEDUPE_WINDOW_SECS", default_value_t = 86_400)]
    dedupe_window_secs: u64,
    /// How often expired leases are returned to their queue, in milliseconds.
    #[arg(long, env = "ONCEQ_LEASE_REAP_MS", default_value_t = 1_000)]
    lease_reap_ms: u64,
    /// How often expired dedupe keys and old messages are purged, in seconds.
    #[arg(long, env = "ONCEQ_PURGE_SECS", default_value_t = 60)]
    purge_secs: u64,
    /// Prices per capability, e.g. "queue.publish=0.00002" (default: all free).
    #[arg(long, env = "ONCEQ_PRICES", default_value = "")]
    prices: String,
    /// Default rate limit of every key, requests per second (0: none).
    #[arg(long, env = "ONCEQ_KEY_RATE", default_value_t = 0.0)]
    key_rate: f64,
    /// Burst of the per-key limit (default: one second's worth, at least 1).
    #[arg(long, env = "ONCEQ_KEY_BURST")]
    key_burst: Option<u32>,
    /// Default rate limit of every project, requests per second (0: none).
    #[arg(long, env = "ONCEQ_PROJECT_RATE", default_value_t = 0.0)]
    project_rate: f64,
    /// Burst of the per-project limit (default: one second's worth).
    #[arg(long, env = "ONCEQ_PROJECT_BURST")]
    project_burst: Option<u32>,
    /// How often usage is written and limits re-read, in milliseconds.
    #[arg(long, env = "ONCEQ_ACCOUNT_SYNC_MS", default_value_t = 1_000)]
    account_sync_ms: u64,
    /// Longest wait for a request's headers (and idle keep-alive), seconds.
    #[arg(long, env = "ONCEQ_HEADER_TIMEOUT_SECS", default_value_t = 10)]
    header_timeout_secs: u64,
    /// Longest wait for a request's body, seconds.
    #[arg(long, env = "ONCEQ_BODY_TIMEOUT_SECS", default_value_t = 30)]
    body_timeout_secs: u64,
    /// Most connections served at once; more are closed at once.
    #[arg(long, env = "ONCEQ_MAX_CONNECTIONS", default_value_t = 1024)]
    max_connections: usize,
}

/// `--*-rate` and `--*-burst` as a limit; 0 means none.
fn rate(flag: &str, per_sec: f64, burst: Option<u32>) -> anyhow::Result<Option<RateLimit>> {
    anyhow::ensure!(
        per_sec.is_finite() && per_sec >= 0.0,
        "--{flag}-rate must be a non-negative number"
    );
    if per_sec == 0.0 {
        return Ok(None);
    }
    let burst = burst.unwrap_or(per_sec.ceil() as u32).max(1);
    Ok(Some(RateLimit { per_sec, burst }))
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let prices = PriceTable::parse(&args.prices).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        args.dedupe_window_secs > 0,
        "--dedupe-window-secs must be positive"
    );
    anyhow::ensure!(args.lease_reap_ms > 0, "--lease-reap-ms must be positive");
    anyhow::ensure!(args.purge_secs > 0, "--purge-secs must be positive");
    anyhow::ensure!(
        args.account_sync_ms > 0,
        "--account-sync-ms must be positive"
    );
    anyhow::ensure!(
        args.header_timeout_secs > 0 && args.body_timeout_secs > 0,
        "--header-timeout-secs and --body-timeout-secs must be positive"
    );
    anyhow::ensure!(
        args.max_connections > 0,
        "--max-connections must be positive"
    );
    let config = ServerConfig {
        dedupe_window: Duration::from_secs(args.dedupe_window_secs),
        lease_reap_interval: Duration::from_millis(args.lease_reap_ms),
        purge_interval: Duration::from_secs(args.purge_secs),
        prices,
        key_rate: rate("key", args.key_rate, args.key_burst)?,
        project_rate: rate("project", args.project_rate, args.project_burst)?,
        account_sync_interval: Duration::from_millis(args.account_sync_ms),
        header_read_timeout: Duration::from_secs(args.header_timeout_secs),
        body_read_timeout: Duration::from_secs(args.body_timeout_secs),
        max_connections: args.max_connections,
        ..ServerConfig::default()
    };
    onceq_server::serve::serve(ServeOptions {
        listen: args.listen,
        database_url: args.store.database_url,
        data_dir: args.store.data_dir,
        api_key: args.api_key.filter(|k| !k.is_empty()),
        config,
    })
    .await
    .context("onceq serve")
}
