//! `data` bodies of the account endpoints: usage and balance.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

/// `GET /v1/account/usage`: what the key's project used in `[from, to)`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Usage {
    /// The project.
    pub project: String,
    /// Start of the range (inclusive).
    pub from: Timestamp,
    /// End of the range (exclusive).
    pub to: Timestamp,
    /// One entry per capability called in the range, by capability id.
    pub items: Vec<UsageItem>,
    /// Sum of `items[].cost_usd`.
    pub total_cost_usd: f64,
}

/// Usage of one capability.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UsageItem {
    /// Capability id, e.g. `queue.publish`.
    pub capability: String,
    /// Successful calls.
    pub calls: u64,
    /// Calls that cost something (replays and free calls do not).
    pub billable_calls: u64,
    /// What they cost, in USD.
    pub cost_usd: f64,
}

/// `GET /v1/account/balance`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Balance {
    /// Credit left: `credit_limit_usd - spent_usd` (never below 0), or
    /// `null` when the project has no credit limit.
    pub balance_usd: Option<f64>,
    /// Always `USD`.
    pub currency: String,
    /// The project's credit limit, `null` for none.
    pub credit_limit_usd: Option<f64>,
    /// Everything the project has spent.
    pub spent_usd: f64,
}

/// Micro-USD (integer, how the server counts money) to USD.
pub fn micros_to_usd(micros: u64) -> f64 {
    micros as f64 / 1e6
}
