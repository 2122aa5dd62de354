//! Server settings. Every field has a default that suits a single server on
//! a small machine; `onceq serve --help` lists the flags that set them.

use std::time::Duration;

use crate::{pricing::PriceTable, push::PushConfig};

/// Settings of the HTTP layer and its background services.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How long a publish idempotency key is remembered (default 24 h).
    pub dedupe_window: Duration,
    /// How often expired leases are returned to their queue (default 1 s).
    /// An expired lease is invisible to consumers until this pass runs.
    pub lease_reap_interval: Duration,
    /// Leases handled per reaper transaction.
    pub lease_reap_batch: u32,
    /// How often expired dedupe keys and messages past retention are
    /// removed (default 60 s).
    pub purge_interval: Duration,
    /// While long-polling, how often a waiting consumer re-checks the store
    /// even without a local wake-up: covers publishes on other servers that
    /// share the database, and delayed messages coming due (default 250 ms).
    pub long_poll_recheck: Duration,
    /// Largest request body accepted, in bytes (default 4 MiB: a full batch
    /// of ten 256 KiB payloads plus JSON overhead).
    pub max_body_bytes: usize,
    /// Most messages one `publish_batch` may carry (default 10, the
    /// contract's limit). Raising it is an extension for onceq's own clients
    /// and benchmarks: an Infrai client never sends more than 10.
    pub max_batch: usize,
    /// Prices per capability.
    pub prices: PriceTable,
    /// Push deliveries: whom they may reach, how often the store is polled.
    pub push: PushConfig,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            dedupe_window: Duration::from_secs(24 * 3600),
            lease_reap_interval: Duration::from_secs(1),
            lease_reap_batch: 1000,
            purge_interval: Duration::from_secs(60),
            long_poll_recheck: Duration::from_millis(250),
            max_body_bytes: 4 * 1024 * 1024,
            max_batch: onceq_types::MAX_BATCH,
            prices: PriceTable::default(),
            push: PushConfig::default(),
        }
    }
}
