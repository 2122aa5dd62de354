//! Outbound deliveries: what push subscriptions (`crate::push`), account
//! webhooks (`crate::webhooks`) and cron task schedules (`crate::cron`,
//! delivered through a push subscription) share to reach a URL of a
//! tenant's choosing, and the caps that keep one tenant, or one receiver
//! that accepts and never answers, from taking what the others need.
//!
//! - [`config`]: the settings, [`PushConfig`] (whom deliveries may reach,
//!   how they retry) and [`OutboundLimits`] (how many may be open at once).
//! - [`guard`]: the SSRF guard: which URLs and addresses deliveries may
//!   reach.
//! - [`client`]: the one HTTP client (resolving through the guard) and one
//!   POST's outcome within its timeout.
//! - [`signature`]: the `Onceq-Signature` HMAC.
//! - [`secret`]: the rule of a caller's secret, and generated ones.
//! - [`backoff`]: the wait before a failed delivery's next attempt.
//! - [`limits`]: the per-project, per-destination and per-process caps,
//!   their [`Permit`]s and their counts for `/metrics`.
//!
//! [`Outbound`] bundles the client, the guard and the caps; `AppState`
//! holds one, so every kind of delivery in a process counts against the
//! same caps.

pub mod backoff;
pub mod client;
pub mod config;
pub mod guard;
pub mod limits;
pub mod secret;
pub mod signature;

use std::sync::Arc;

pub use config::{OutboundLimits, PushConfig};
pub use limits::{Cap, Kind, Limits, Permit};

use guard::Guard;
use reqwest::Url;

/// The client, the guard and the caps of one process.
#[derive(Debug)]
pub struct Outbound {
    /// The SSRF guard (also the client's resolver).
    pub guard: Guard,
    /// One connection pool for every destination; `Err` (why) when none
    /// could be made, and then nothing is delivered.
    pub client: Result<reqwest::Client, String>,
    /// The caps on deliveries open at once.
    pub limits: Arc<Limits>,
}

impl Outbound {
    /// The outbound side of `config`'s settings.
    pub fn new(config: &PushConfig) -> Self {
        let guard = Guard::new(config);
        Self {
            client: client::build(&guard).map_err(|e| e.to_string()),
            guard,
            limits: Limits::new(config.limits),
        }
    }
}

/// The destination a URL's deliveries count against: `host:port`, as
/// written (before any name is resolved).
pub fn destination(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or(""),
        url.port_or_known_default().unwrap_or(0)
    )
}
