//! `onceq serve`.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use clap::Args;
use onceq_server::{ServerConfig, config::MetricsConfig, pricing::PriceTable, serve::ServeOptions};

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
    /// Require `Authorization: Bearer <TOKEN>` on /metrics (default: open).
    #[arg(long, env = "ONCEQ_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    /// Do not serve /metrics (it answers 404).
    #[arg(long, env = "ONCEQ_METRICS_DISABLE")]
    metrics_disable: bool,
    /// Distinct (project, queue) label sets in the per-queue metrics; later
    /// queues are counted under queue="_other".
    #[arg(long, env = "ONCEQ_METRICS_MAX_QUEUES", default_value_t = 1000)]
    metrics_max_queues: usize,
    /// How long one queue-depth query serves later scrapes, in milliseconds
    /// (0: query on every scrape).
    #[arg(long, env = "ONCEQ_METRICS_DEPTH_CACHE_MS", default_value_t = 5_000)]
    metrics_depth_cache_ms: u64,
}

pub async fn run(args: ServeArgs) -> anyhow::Result<()> {
    let prices = PriceTable::parse(&args.prices).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        args.dedupe_window_secs > 0,
        "--dedupe-window-secs must be positive"
    );
    anyhow::ensure!(args.lease_reap_ms > 0, "--lease-reap-ms must be positive");
    anyhow::ensure!(args.purge_secs > 0, "--purge-secs must be positive");
    let config = ServerConfig {
        dedupe_window: Duration::from_secs(args.dedupe_window_secs),
        lease_reap_interval: Duration::from_millis(args.lease_reap_ms),
        purge_interval: Duration::from_secs(args.purge_secs),
        prices,
        metrics: MetricsConfig {
            enabled: !args.metrics_disable,
            token: args.metrics_token.filter(|t| !t.is_empty()),
            max_queue_series: args.metrics_max_queues,
            depth_max_age: Duration::from_millis(args.metrics_depth_cache_ms),
        },
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
