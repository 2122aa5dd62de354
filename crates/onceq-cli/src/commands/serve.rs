//! `onceq serve`.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context;
use clap::{ArgAction, Args};
use onceq_server::{
    ServerConfig,
    config::{LedgerLimits, MetricsConfig},
    outbound::{OutboundLimits, PushConfig},
    pricing::PriceTable,
    serve::ServeOptions,
};
use onceq_store::RateLimit;

use super::{StoreArgs, switch::Switch};
use crate::runtime::{self, WorkerThreads};

/// Flags of `onceq serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ONCEQ_LISTEN", default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    #[command(flatten)]
    store: StoreArgs,
    /// Threads that serve requests: a count, or auto: half the cores (at
    /// least one) when the store works on this machine (the embedded
    /// store, or a database URL whose hosts are loopback addresses or
    /// sockets), which leaves it the rest; one per core beside a remote
    /// PostgreSQL.
    #[arg(long, env = "ONCEQ_WORKER_THREADS", default_value = "auto")]
    worker_threads: WorkerThreads,
    /// Accept this API key for project "default" (stored hashed).
    #[arg(long, env = "ONCEQ_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// How long publish idempotency keys are remembered, in seconds.
    #[arg(long, env = "ONCEQ_DEDUPE_WINDOW_SECS", default_value_t = 86_400)]
    dedupe_window_secs: u64,
    /// Most call-ledger entries (Idempotency-Key answers, kept for the
    /// dedupe window) per project; a keyed call with a new key past it is
    /// refused 429 before it runs. The default is 58 keyed calls a second
    /// for 24 h.
    #[arg(long, env = "ONCEQ_LEDGER_MAX_ENTRIES", default_value_t = onceq_server::config::LEDGER_MAX_ENTRIES)]
    ledger_max_entries: u32,
    /// Most bytes of call-ledger answers per project (default 1 GiB); a
    /// keyed call with a new key past it is refused 429 before it runs.
    #[arg(long, env = "ONCEQ_LEDGER_MAX_BYTES", default_value_t = onceq_server::config::LEDGER_MAX_BYTES)]
    ledger_max_bytes: u64,
    /// Most messages one publish_batch may carry. The contract's limit is
    /// 10; more is an extension for onceq's own clients (e.g. `onceq bench
    /// --batch-size 100`). The body size limit grows with it.
    #[arg(long, env = "ONCEQ_MAX_BATCH", default_value_t = onceq_types::MAX_BATCH)]
    max_batch: usize,
    /// How long a queue created without completed_retention_seconds keeps
    /// acked (and cancelled) messages, as `completed`, in seconds (0 = not
    /// at all; at most 2592000, 30 days).
    #[arg(long, env = "ONCEQ_COMPLETED_RETENTION_SECONDS", default_value_t = 0,
          value_parser = clap::value_parser!(i32).range(0..=onceq_types::MAX_COMPLETED_RETENTION_SECONDS))]
    completed_retention_seconds: i32,
    /// How often expired leases are returned to their queue, in milliseconds.
    #[arg(long, env = "ONCEQ_LEASE_REAP_MS", default_value_t = 1_000)]
    lease_reap_ms: u64,
    /// How often expired dedupe keys, old messages and finished messages past
    /// their queue's completed retention are purged, in seconds.
    #[arg(long, env = "ONCEQ_PURGE_SECS", default_value_t = 60)]
    purge_secs: u64,
    /// The longest the cron loop waits between looks at the schedules, in
    /// milliseconds: how late a run may fire while a server is up.
    #[arg(long, env = "ONCEQ_CRON_POLL_MS", default_value_t = 1_000)]
    cron_poll_ms: u64,
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
    /// Longest wait for the database on any request, milliseconds: past it
    /// the request answers 503 and /readyz says not ready.
    #[arg(long, env = "ONCEQ_STORE_TIMEOUT_MS", default_value_t = 5_000)]
    store_timeout_ms: u64,
    /// Most connections served at once (0: sized from the descriptor
    /// limit at start, logged); past it the oldest idle one is shed, else
    /// the longest-parked long poll cut short, for a new one.
    #[arg(long, env = "ONCEQ_MAX_CONNECTIONS", default_value_t = 0)]
    max_connections: usize,
    /// Most connections from one source address (0: no bound); raise it
    /// behind a reverse proxy, whose connections all come from one address.
    #[arg(long, env = "ONCEQ_MAX_CONNECTIONS_PER_IP", default_value_t = 256)]
    max_connections_per_ip: usize,
    /// Most long polls (consume with wait_seconds > 0) one key may have
    /// waiting at once (0: no cap); past it 429 with Retry-After.
    #[arg(long, env = "ONCEQ_LONG_POLL_MAX_PER_KEY", default_value_t = 1024)]
    long_poll_max_per_key: usize,
    /// Most long polls one project may have waiting at once, every key
    /// together (0: no cap); past it 429 with Retry-After.
    #[arg(long, env = "ONCEQ_LONG_POLL_MAX_PER_PROJECT", default_value_t = 2048)]
    long_poll_max_per_project: usize,
    /// Most cron schedules one project may have (0: no cap); cron/create
    /// past it answers 400.
    #[arg(
        long,
        env = "ONCEQ_CRON_MAX_SCHEDULES_PER_PROJECT",
        default_value_t = 1000
    )]
    cron_max_schedules_per_project: u32,
    /// Cron runs this server fires per second for one project (0: no cap);
    /// past it the project's runs fire later, others' on time.
    #[arg(
        long,
        env = "ONCEQ_CRON_PROJECT_RUNS_PER_SECOND",
        default_value_t = 100
    )]
    cron_project_runs_per_second: u32,
    /// Require `Authorization: Bearer <TOKEN>` on /metrics (default: open).
    #[arg(long, env = "ONCEQ_METRICS_TOKEN", hide_env_values = true)]
    metrics_token: Option<String>,
    /// Do not serve /metrics (it answers 404).
    #[arg(
        long,
        env = "ONCEQ_METRICS_DISABLE",
        value_parser = Switch,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        default_value = "false"
    )]
    metrics_disable: bool,
    /// Serve /metrics without a token to anyone, not only to loopback
    /// peers (it lists every project's queue names and counts).
    #[arg(
        long,
        env = "ONCEQ_METRICS_PUBLIC",
        value_parser = Switch,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        default_value = "false"
    )]
    metrics_public: bool,
    /// Distinct (project, queue) label sets in the per-queue metrics; later
    /// queues are counted under queue="_other".
    #[arg(long, env = "ONCEQ_METRICS_MAX_QUEUES", default_value_t = 1000)]
    metrics_max_queues: usize,
    /// How long one queue-depth query serves later scrapes, in milliseconds
    /// (0: query on every scrape).
    #[arg(long, env = "ONCEQ_METRICS_DEPTH_CACHE_MS", default_value_t = 5_000)]
    metrics_depth_cache_ms: u64,
    /// Hosts push subscriptions may target over plain http:// (and whose
    /// addresses are not checked against internal ranges), comma-separated.
    #[arg(long, env = "ONCEQ_PUSH_ALLOW_HTTP", value_delimiter = ',')]
    push_allow_http: Vec<String>,
    /// Let push subscriptions target loopback (localhost, 127.0.0.0/8, ::1),
    /// over https:// or http://. For development.
    #[arg(
        long,
        env = "ONCEQ_PUSH_ALLOW_LOOPBACK",
        value_parser = Switch,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true",
        default_value = "false"
    )]
    push_allow_loopback: bool,
    /// How often the push dispatcher polls the store for subscriptions and
    /// queues with work, in milliseconds.
    #[arg(long, env = "ONCEQ_PUSH_SCAN_MS", default_value_t = 1_000)]
    push_scan_ms: u64,
    /// Outbound deliveries (push, webhooks, cron tasks) open at once in
    /// this process, every project together. Each is one socket: keep it
    /// well under the process's file descriptor limit.
    #[arg(long, env = "ONCEQ_OUTBOUND_MAX_IN_FLIGHT", default_value_t = 512)]
    outbound_max_in_flight: usize,
    /// Outbound deliveries open at once for one project; its others wait
    /// (unclaimed) for room.
    #[arg(long, env = "ONCEQ_OUTBOUND_MAX_PER_PROJECT", default_value_t = 100)]
    outbound_max_per_project: usize,
    /// Outbound deliveries open at once to one destination (host:port),
    /// every project together.
    #[arg(
        long,
        env = "ONCEQ_OUTBOUND_MAX_PER_DESTINATION",
        default_value_t = 100
    )]
    outbound_max_per_destination: usize,
    /// Account webhook attempts in flight at once in this process.
    #[arg(long, env = "ONCEQ_WEBHOOK_MAX_IN_FLIGHT", default_value_t = 32)]
    webhook_max_in_flight: usize,
    /// Account webhook attempts in flight at once for one project.
    #[arg(long, env = "ONCEQ_WEBHOOK_MAX_PER_PROJECT", default_value_t = 8)]
    webhook_max_per_project: usize,
}

impl ServeArgs {
    /// `--worker-threads` resolved for this machine and database.
    pub fn worker_threads(&self) -> std::num::NonZeroUsize {
        self.worker_threads
            .resolve(runtime::cores(), self.store.database_url.as_deref())
    }
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
    // What the runtime has, not what was asked: the line is the check
    // that the flag reached it.
    tracing::info!(
        worker_threads = tokio::runtime::Handle::current().metrics().num_workers(),
        cores = runtime::cores().get(),
        "request threads"
    );
    let prices = PriceTable::parse(&args.prices).map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        args.dedupe_window_secs > 0,
        "--dedupe-window-secs must be positive"
    );
    anyhow::ensure!(
        args.ledger_max_entries > 0 && args.ledger_max_bytes > 0,
        "--ledger-max-entries and --ledger-max-bytes must be positive"
    );
    anyhow::ensure!(args.lease_reap_ms > 0, "--lease-reap-ms must be positive");
    anyhow::ensure!(
        args.store_timeout_ms > 0,
        "--store-timeout-ms must be positive"
    );
    anyhow::ensure!(args.purge_secs > 0, "--purge-secs must be positive");
    anyhow::ensure!(args.cron_poll_ms > 0, "--cron-poll-ms must be positive");
    anyhow::ensure!(
        args.account_sync_ms > 0,
        "--account-sync-ms must be positive"
    );
    anyhow::ensure!(
        args.header_timeout_secs > 0 && args.body_timeout_secs > 0,
        "--header-timeout-secs and --body-timeout-secs must be positive"
    );
    anyhow::ensure!(args.push_scan_ms > 0, "--push-scan-ms must be positive");
    anyhow::ensure!(
        [
            args.outbound_max_in_flight,
            args.outbound_max_per_project,
            args.outbound_max_per_destination,
            args.webhook_max_in_flight,
            args.webhook_max_per_project,
        ]
        .iter()
        .all(|n| *n > 0),
        "--outbound-max-in-flight, --outbound-max-per-project, --outbound-max-per-destination, --webhook-max-in-flight and --webhook-max-per-project must be positive"
    );
    anyhow::ensure!(
        (1..=1000).contains(&args.max_batch),
        "--max-batch must be 1 to 1000"
    );
    let config = ServerConfig {
        dedupe_window: Duration::from_secs(args.dedupe_window_secs),
        ledger: LedgerLimits {
            max_entries: args.ledger_max_entries,
            max_bytes: args.ledger_max_bytes,
        },
        lease_reap_interval: Duration::from_millis(args.lease_reap_ms),
        purge_interval: Duration::from_secs(args.purge_secs),
        cron_poll_interval: Duration::from_millis(args.cron_poll_ms),
        max_batch: args.max_batch,
        // 4 MiB per 10 messages: a full batch of 256 KiB payloads fits.
        max_body_bytes: 4 * 1024 * 1024 * args.max_batch.div_ceil(10),
        prices,
        key_rate: rate("key", args.key_rate, args.key_burst)?,
        project_rate: rate("project", args.project_rate, args.project_burst)?,
        account_sync_interval: Duration::from_millis(args.account_sync_ms),
        header_read_timeout: Duration::from_secs(args.header_timeout_secs),
        body_read_timeout: Duration::from_secs(args.body_timeout_secs),
        store_timeout: Duration::from_millis(args.store_timeout_ms),
        max_connections: args.max_connections,
        max_connections_per_ip: args.max_connections_per_ip,
        long_poll_max_per_key: args.long_poll_max_per_key,
        long_poll_max_per_project: args.long_poll_max_per_project,
        cron_max_schedules_per_project: args.cron_max_schedules_per_project,
        cron_project_runs_per_second: args.cron_project_runs_per_second,
        completed_retention_seconds: args.completed_retention_seconds,
        // Borrows `args`: before `metrics` takes the token out of it.
        push: push_config(&args),
        metrics: MetricsConfig {
            enabled: !args.metrics_disable,
            token: args.metrics_token.filter(|t| !t.is_empty()),
            public: args.metrics_public,
            max_queue_series: args.metrics_max_queues,
            depth_max_age: Duration::from_millis(args.metrics_depth_cache_ms),
        },
        ..ServerConfig::default()
    };
    onceq_server::serve::serve(ServeOptions {
        listen: args.listen,
        database_url: args.store.database_url()?,
        data_dir: args.store.data_dir,
        api_key: args.api_key.filter(|k| !k.is_empty()),
        config,
    })
    .await
    .context("onceq serve")
}

/// The `--push-*` flags.
fn push_config(args: &ServeArgs) -> PushConfig {
    PushConfig {
        allow_http_hosts: args
            .push_allow_http
            .iter()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty())
            .collect(),
        allow_loopback: args.push_allow_loopback,
        scan_interval: Duration::from_millis(args.push_scan_ms),
        limits: OutboundLimits {
            max_in_flight: args.outbound_max_in_flight,
            max_per_project: args.outbound_max_per_project,
            max_per_destination: args.outbound_max_per_destination,
            webhook_max_in_flight: args.webhook_max_in_flight,
            webhook_max_per_project: args.webhook_max_per_project,
        },
        ..PushConfig::default()
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn push_flags() {
        let default = push_config(&Cmd::try_parse_from(["serve"]).unwrap().serve);
        assert!(default.allow_http_hosts.is_empty());
        assert!(!default.allow_loopback);
        assert_eq!(default.scan_interval, Duration::from_secs(1));
        assert_eq!(default.limits, OutboundLimits::default());

        let args = Cmd::try_parse_from([
            "serve",
            "--push-allow-http",
            "hooks.internal, 10.0.0.7",
            "--push-allow-loopback",
            "--push-scan-ms",
            "250",
            "--outbound-max-in-flight",
            "64",
            "--outbound-max-per-project",
            "8",
            "--outbound-max-per-destination",
            "4",
            "--webhook-max-in-flight",
            "6",
            "--webhook-max-per-project",
            "2",
        ])
        .unwrap()
        .serve;
        let push = push_config(&args);
        assert_eq!(push.allow_http_hosts, ["hooks.internal", "10.0.0.7"]);
        assert!(push.allow_loopback);
        assert_eq!(push.scan_interval, Duration::from_millis(250));
        assert_eq!(
            push.limits,
            OutboundLimits {
                max_in_flight: 64,
                max_per_project: 8,
                max_per_destination: 4,
                webhook_max_in_flight: 6,
                webhook_max_per_project: 2,
            }
        );
    }
}
