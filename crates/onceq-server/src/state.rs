//! The state every handler shares. Cheap to clone: one reference count
//! (and the clock), since axum clones it for every extractor and
//! middleware of every request — as thirteen `Arc`s and a cancellation
//! token (whose clone takes a lock) it was ~4 % of the server's CPU per
//! publish (docs/performance.md).

use std::{ops::Deref, sync::Arc};

use onceq_store::{Store, traced::Traced};
use tokio_util::sync::CancellationToken;

use crate::{
    ServerConfig, accounts::Accounts, clock::Clock, connections::Connections,
    cron::fairness::CronFairness, long_polls::LongPolls, metrics::Metrics, outbound::Outbound,
    throughput::Throughput, wakeup::Wakeups, webhooks::Events,
};

/// Shared by all handlers and background services; its fields are
/// [`Shared`]'s, reached through `Deref`.
#[derive(Clone)]
pub struct AppState {
    shared: Arc<Shared>,
    /// Where "now" comes from (outside `shared`: tests replace it).
    pub clock: Clock,
}

/// What every clone of an [`AppState`] shares.
pub struct Shared {
    /// The storage backend: private, so that every use goes through
    /// [`AppState::store`] (queues, keys, cron, webhooks, the ledger) or,
    /// for messages, [`AppState::messages`] (see [`crate::messages`]).
    store: Arc<dyn Store>,
    /// Settings.
    pub config: Arc<ServerConfig>,
    /// Long-poll wake-ups.
    pub wakeups: Arc<Wakeups>,
    /// Cancelled when the server shuts down: long polls return early.
    pub shutdown: CancellationToken,
    /// Metering, credit and rate limits of this process.
    pub accounts: Arc<Accounts>,
    /// Counters and histograms behind `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Recent publish/ack counts per queue (this process only), for the
    /// dashboard's charts.
    pub throughput: Arc<Throughput>,
    /// Wakes this server's cron loop when a schedule's next tick changed
    /// here (create, update, resume).
    pub cron_wake: Arc<tokio::sync::Notify>,
    /// Account webhook events: who listens, the dispatcher's wake-up.
    pub events: Arc<Events>,
    /// The HTTP client, SSRF guard and caps every outbound delivery (push,
    /// webhooks, cron tasks) of this process shares.
    pub outbound: Arc<Outbound>,
    /// The connections this process holds (the serving loop admits them).
    pub connections: Arc<Connections>,
    /// Long polls waiting, by key and project, and their caps.
    pub long_polls: Arc<LongPolls>,
    /// Cron runs fired per project (the firing rate's buckets).
    pub cron_fairness: Arc<CronFairness>,
}

impl AppState {
    /// State over `store` with the system clock. Every call of the store
    /// is made in a span of its own ([`Traced`]), for traces.
    pub fn new(store: Arc<dyn Store>, config: ServerConfig) -> Self {
        let shared = Shared {
            store: Traced::wrap(store),
            metrics: Metrics::new(config.metrics.clone()),
            outbound: Arc::new(Outbound::new(&config.push)),
            connections: connections(&config),
            long_polls: LongPolls::new(
                config.long_poll_max_per_key,
                config.long_poll_max_per_project,
            ),
            cron_fairness: Arc::new(CronFairness::new(config.cron_project_runs_per_second)),
            config: Arc::new(config),
            wakeups: Arc::new(Wakeups::default()),
            shutdown: CancellationToken::new(),
            accounts: Arc::new(Accounts::default()),
            throughput: Arc::new(Throughput::default()),
            cron_wake: Arc::new(tokio::sync::Notify::new()),
            events: Arc::new(Events::default()),
        };
        Self {
            shared: Arc::new(shared),
            clock: Clock::System,
        }
    }

    /// The store, for everything but messages: a message operation (its
    /// hand-outs, lease endings, removals, moves and reads) goes through
    /// [`AppState::messages`], which the test
    /// `messages::boundary::no_route_reaches_messages_but_through_the_service`
    /// holds every other module to.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Replaces the clock (tests).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}

/// The connection table: the configured bound, or (0) one sized from the
/// process's descriptor limit, with room left for outbound deliveries;
/// the choice is logged.
fn connections(config: &ServerConfig) -> Arc<Connections> {
    let limits = &config.push.limits;
    let outbound = limits.max_in_flight + limits.webhook_max_in_flight;
    let nofile = crate::connections::descriptor_limit();
    let sized = crate::connections::sized(nofile.unwrap_or(u64::MAX), outbound);
    let max = match config.max_connections {
        0 => sized,
        set => {
            if set > sized {
                tracing::warn!(
                    max_connections = set,
                    descriptor_limit = nofile,
                    fits = sized,
                    "--max-connections is more than the descriptor limit leaves room for: accepts will fail before it is reached"
                );
            }
            set
        }
    };
    tracing::info!(
        max_connections = max,
        descriptor_limit = nofile,
        outbound_reserved = outbound,
        sized_from_limit = config.max_connections == 0,
        "connection limit chosen"
    );
    Connections::new(max, config.max_connections_per_ip)
}
