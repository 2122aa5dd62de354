//! Server settings. Every field has a default that suits a single server on
//! a small machine; `onceq serve --help` lists the flags that set them.

use std::time::Duration;

use onceq_store::RateLimit;

use crate::{outbound::PushConfig, pricing::PriceTable};

/// Settings of the HTTP layer and its background services.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How long a publish idempotency key is remembered (default 24 h).
    pub dedupe_window: Duration,
    /// What the call ledger keeps per project (`Idempotency-Key` answers).
    pub ledger: LedgerLimits,
    /// How often expired leases are returned to their queue (default 1 s).
    /// An expired lease is invisible to consumers until this pass runs.
    pub lease_reap_interval: Duration,
    /// Leases handled per reaper transaction.
    pub lease_reap_batch: u32,
    /// How often expired dedupe keys and messages past retention are
    /// removed (default 60 s).
    pub purge_interval: Duration,
    /// The longest the cron loop sleeps between looks at the schedules
    /// (default 1 s): a run is due on this server at its tick (the loop
    /// wakes then), but a schedule created or resumed on another server is
    /// seen within this. It bounds how late a run fires while a server is
    /// up (docs/cron.md).
    pub cron_poll_interval: Duration,
    /// While long-polling, how often a waiting consumer re-checks the store
    /// even without a local wake-up: covers publishes on other servers that
    /// share the database, and delayed messages coming due (default 250 ms).
    pub long_poll_recheck: Duration,
    /// How long a waiting consume's acks may wait for the publish that
    /// hands it its next message to commit them in its transaction before
    /// the consume does them alone (default 25 ms; zero: never carried).
    /// See docs/guarantees.md, "Acks sent with a consume".
    pub ack_carry: Duration,
    /// Largest request body accepted, in bytes (default 4 MiB: a full batch
    /// of ten 256 KiB payloads plus JSON overhead).
    pub max_body_bytes: usize,
    /// Most messages one `publish_batch` may carry (default 10, the
    /// contract's limit). Raising it is an extension for onceq's own clients
    /// and benchmarks: an Infrai client never sends more than 10.
    pub max_batch: usize,
    /// Prices per capability.
    pub prices: PriceTable,
    /// Default rate limit of every key (`None`: unlimited). A key's own
    /// limit (`onceq keys set-rate`) overrides it.
    pub key_rate: Option<RateLimit>,
    /// Default rate limit of every project (`None`: unlimited). A project's
    /// own limit (`onceq projects set-rate`) overrides it.
    pub project_rate: Option<RateLimit>,
    /// How often usage is written to the store, the server's heartbeat
    /// recorded, and projects' credit limits, spend and rate limits re-read
    /// (default 1 s). Bounds how stale one server's view of the others is.
    pub account_sync_interval: Duration,
    /// Longest wait for a request's headers, from the moment a connection
    /// is open or idle between requests (default 10 s): slow-loris headers
    /// and idle connections are closed after it.
    pub header_read_timeout: Duration,
    /// Longest wait for a request's whole body (default 30 s); a slower
    /// body is answered 408 `REQUEST_TIMEOUT` and its connection closed.
    pub body_read_timeout: Duration,
    /// Longest wait for the store on any request (default 5 s): past it the
    /// request answers 503 `UNAVAILABLE` and `/readyz` not-ready, so a
    /// stalled database never hangs callers.
    pub store_timeout: Duration,
    /// Most connections served at once (default 0: sized at start from
    /// the process's descriptor limit, `connections::sized`). A new
    /// connection past it sheds the oldest idle one, else cuts the
    /// longest-parked long poll short; only when all are busy with other
    /// work is it closed as soon as accepted.
    pub max_connections: usize,
    /// Most connections from one source address (default 256; 0: no
    /// bound), with the same shedding among that address's connections.
    /// Behind a reverse proxy every connection comes from the proxy: raise
    /// it above the proxy's upstream connections, or set 0.
    pub max_connections_per_ip: usize,
    /// Most long polls (`consume` with `wait_seconds > 0`) one key may
    /// have waiting at once in this process (default 1024; 0: no cap);
    /// past it 429 `RATE_LIMITED` (`crate::long_polls`).
    pub long_poll_max_per_key: usize,
    /// Most long polls one project may have waiting at once in this
    /// process, every key together (default 2048; 0: no cap).
    pub long_poll_max_per_project: usize,
    /// Cron: how many schedules one project may have (default 1000; 0:
    /// no cap); `cron/create` past it answers 400 naming the limit.
    pub cron_max_schedules_per_project: u32,
    /// Cron: how many runs per second this server fires for one project
    /// (default 100, burst the same; 0: no cap). Runs past it wait their
    /// turn (fired late, missed ticks collapsing as after downtime)
    /// while other projects' fire on time.
    pub cron_project_runs_per_second: u32,
    /// How long a queue created without `completed_retention_seconds` (by
    /// `create`, or by its first publish) keeps acked and cancelled messages, in seconds (default 0: not at
    /// all; at most `onceq_types::MAX_COMPLETED_RETENTION_SECONDS`).
    pub completed_retention_seconds: i32,
    /// Push deliveries: whom they may reach, how often the store is polled.
    pub push: PushConfig,
    /// `/metrics`.
    pub metrics: MetricsConfig,
}

/// How `/metrics` is served (`docs/metrics.md`).
#[derive(Clone)]
pub struct MetricsConfig {
    /// Serve `/metrics` at all (default true; `--metrics-disable`).
    pub enabled: bool,
    /// When set, `/metrics` requires `Authorization: Bearer <token>`
    /// (`--metrics-token`), from anywhere.
    pub token: Option<String>,
    /// Without a token: serve `/metrics` to anyone (`--metrics-public`)
    /// rather than to loopback peers only (the default). It lists every
    /// tenant's project and queue names and counts, so it is not open to
    /// the network unless asked for.
    pub public: bool,
    /// How many `(project, queue)` label sets the per-queue series may use
    /// (default 1000); queues beyond are counted under `queue="_other"`.
    pub max_queue_series: usize,
    /// How long a depth query's answer serves later scrapes (default 5 s),
    /// so that several scrapers, or a scraper gone wild, cost one query.
    pub depth_max_age: Duration,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            token: None,
            public: false,
            max_queue_series: 1000,
            depth_max_age: Duration::from_secs(5),
        }
    }
}

/// The call ledger's bounds per project (docs/security.md): a keyed call
/// that would take a project past either is refused with 429
/// `RATE_LIMITED` before it runs, until the project's first entry ends.
///
/// The defaults are sized from a rate × the 24 h window × an answer: 5 000
/// 000 entries is 58 keyed calls a second, sustained, all day; 1 GiB is
/// those answers at ~200 bytes each (an ack's or a cancel's is 100–200),
/// and stops a project whose answers are large (schedules echoing payloads
/// of up to 256 KiB) at ~4 000 of them. Checking them costs one read of the
/// project's counters whatever it keeps (`idempotency::bound`).
#[derive(Debug, Clone, Copy)]
pub struct LedgerLimits {
    /// Most entries kept per project (default 5 000 000).
    pub max_entries: u32,
    /// Most bytes of recorded answers per project (default 1 GiB).
    pub max_bytes: u64,
}

/// [`LedgerLimits::max_entries`]' default.
pub const LEDGER_MAX_ENTRIES: u32 = 5_000_000;
/// [`LedgerLimits::max_bytes`]' default.
pub const LEDGER_MAX_BYTES: u64 = 1024 * 1024 * 1024;

impl Default for LedgerLimits {
    fn default() -> Self {
        Self {
            max_entries: LEDGER_MAX_ENTRIES,
            max_bytes: LEDGER_MAX_BYTES,
        }
    }
}

impl std::fmt::Debug for MetricsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsConfig")
            .field("enabled", &self.enabled)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("max_queue_series", &self.max_queue_series)
            .field("depth_max_age", &self.depth_max_age)
            .finish()
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            dedupe_window: Duration::from_secs(24 * 3600),
            ledger: LedgerLimits::default(),
            lease_reap_interval: Duration::from_secs(1),
            lease_reap_batch: 1000,
            purge_interval: Duration::from_secs(60),
            cron_poll_interval: Duration::from_secs(1),
            long_poll_recheck: Duration::from_millis(250),
            ack_carry: Duration::from_millis(25),
            max_body_bytes: 4 * 1024 * 1024,
            max_batch: onceq_types::MAX_BATCH,
            prices: PriceTable::default(),
            key_rate: None,
            project_rate: None,
            account_sync_interval: Duration::from_secs(1),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            store_timeout: Duration::from_secs(5),
            max_connections: 0,
            max_connections_per_ip: 256,
            long_poll_max_per_key: 1024,
            long_poll_max_per_project: 2048,
            cron_max_schedules_per_project: 1000,
            cron_project_runs_per_second: 100,
            completed_retention_seconds: 0,
            metrics: MetricsConfig::default(),
            push: PushConfig::default(),
        }
    }
}
