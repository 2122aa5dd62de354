//! Settings of push deliveries, with their defaults.

use std::time::Duration;

/// How the push dispatcher runs and whom it may reach.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// Hosts (names or IP addresses, as written in URLs) the operator
    /// trusts: a subscription may target them over plain `http://`, and
    /// their addresses are not checked against the internal ranges
    /// (`--push-allow-http`). Default: none.
    pub allow_http_hosts: Vec<String>,
    /// Whether subscriptions may target loopback (`localhost`, 127.0.0.0/8,
    /// `::1`), over `https://` or `http://` (`--push-allow-loopback`).
    /// Default: false.
    pub allow_loopback: bool,
    /// How often the dispatcher lists the subscriptions of every server
    /// sharing the store and wakes those whose queue has work: covers
    /// publishes on other servers, retries coming due and subscriptions
    /// added elsewhere (`--push-scan-ms`; default 1 s). Publishes on this
    /// server wake their subscriptions at once.
    pub scan_interval: Duration,
    /// A delivery's lease is its `timeout_seconds` plus this: long enough
    /// for the ack or nack after a request that used its whole timeout, so
    /// a message is never handed to a second delivery while the first may
    /// still settle it (default 30 s).
    pub lease_margin: Duration,
    /// The wait after the first failed delivery of a message; each further
    /// failure doubles it, up to `retry_max` (default 5 s).
    pub retry_base: Duration,
    /// The longest wait between two deliveries of a message (default 1 h).
    pub retry_max: Duration,
    /// On shutdown, how long deliveries in flight may still finish (and be
    /// acked or nacked) before they are abandoned; an abandoned delivery's
    /// message is delivered again once its lease runs out (default 10 s).
    pub shutdown_grace: Duration,
}

impl Default for PushConfig {
    fn default() -> Self {
        Self {
            allow_http_hosts: Vec::new(),
            allow_loopback: false,
            scan_interval: Duration::from_secs(1),
            lease_margin: Duration::from_secs(30),
            retry_base: Duration::from_secs(5),
            retry_max: Duration::from_secs(3600),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}
