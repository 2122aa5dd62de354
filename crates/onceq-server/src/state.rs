//! The state every handler shares. Cheap to clone.

use std::sync::Arc;

use onceq_store::{Store, traced::Traced};
use tokio_util::sync::CancellationToken;

use crate::{
    ServerConfig, accounts::Accounts, clock::Clock, metrics::Metrics, outbound::Outbound,
    throughput::Throughput, wakeup::Wakeups, webhooks::Events,
};

/// Shared by all handlers and background services.
#[derive(Clone)]
pub struct AppState {
    /// The storage backend: private, so that every use goes through
    /// [`AppState::store`] (queues, keys, cron, webhooks, the ledger) or,
    /// for messages, [`AppState::messages`] (see [`crate::messages`]).
    store: Arc<dyn Store>,
    /// Where "now" comes from.
    pub clock: Clock,
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
}

impl AppState {
    /// State over `store` with the system clock. Every call of the store
    /// is made in a span of its own ([`Traced`]), for traces.
    pub fn new(store: Arc<dyn Store>, config: ServerConfig) -> Self {
        Self {
            store: Traced::wrap(store),
            clock: Clock::System,
            metrics: Metrics::new(config.metrics.clone()),
            outbound: Arc::new(Outbound::new(&config.push)),
            config: Arc::new(config),
            wakeups: Arc::new(Wakeups::default()),
            shutdown: CancellationToken::new(),
            accounts: Arc::new(Accounts::default()),
            throughput: Arc::new(Throughput::default()),
            cron_wake: Arc::new(tokio::sync::Notify::new()),
            events: Arc::new(Events::default()),
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
