//! Settings of outbound deliveries (push, account webhooks, cron tasks),
//! with their defaults: whom they may reach ([`PushConfig`], named for the
//! `--push-*` flags it came with) and how many may run at once
//! ([`OutboundLimits`]).

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
    /// How long a webhook attempt waits for its endpoint's answer (default
    /// `onceq_types::webhook::ATTEMPT_TIMEOUT_SECONDS`, 30 s, as the API
    /// documents; tests shorten it).
    pub webhook_timeout: Duration,
    /// The caps on deliveries in flight (`--outbound-*`, `--webhook-*`).
    pub limits: OutboundLimits,
}

/// How many outbound deliveries may be open at once, so that no tenant's
/// subscriptions, webhooks or task schedules (nor a receiver that accepts
/// and never answers) can take the process's file descriptors or every
/// delivery slot (docs/security.md, "Outbound deliveries").
///
/// A delivery holds one permit of each of three caps for as long as its
/// request is open, taken in this order: its project's, its destination's
/// (`host:port`), the process's. A delivery that must wait for one is
/// *deferred*: a push subscription claims nothing until it has permits (so
/// its messages stay available, not leased), a webhook's delivery is not
/// claimed. Waiting is first come, first served per cap, and one project
/// never holds more than its share, so another project's deliveries get
/// the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboundLimits {
    /// Deliveries open at once in this process, every kind and project
    /// together (`--outbound-max-in-flight`; default 512).
    pub max_in_flight: usize,
    /// Deliveries open at once for one project, every kind together
    /// (`--outbound-max-per-project`; default 100: one subscription's
    /// largest `max_in_flight`).
    pub max_per_project: usize,
    /// Deliveries open at once to one destination (`host:port` of the URL),
    /// every project together (`--outbound-max-per-destination`; default
    /// 100).
    pub max_per_destination: usize,
    /// Webhook attempts in flight at once in this process
    /// (`--webhook-max-in-flight`; default 32).
    pub webhook_max_in_flight: usize,
    /// Webhook attempts in flight at once for one project
    /// (`--webhook-max-per-project`; default 8): a project whose endpoints
    /// hang holds at most these, and the others' events go out in the rest.
    pub webhook_max_per_project: usize,
}

impl Default for OutboundLimits {
    fn default() -> Self {
        Self {
            max_in_flight: 512,
            max_per_project: 100,
            max_per_destination: 100,
            webhook_max_in_flight: 32,
            webhook_max_per_project: 8,
        }
    }
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
            webhook_timeout: Duration::from_secs(
                onceq_types::webhook::ATTEMPT_TIMEOUT_SECONDS as u64,
            ),
            limits: OutboundLimits::default(),
        }
    }
}
