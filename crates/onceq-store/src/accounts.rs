//! Params and records of the account operations: projects' credit limits
//! and rate overrides, usage, and the heartbeats servers use to count each
//! other. The server aggregates usage in memory and writes it in batches
//! (`usage_flush`); nothing here runs per request.

use jiff::Timestamp;

/// A rate limit: a token bucket refilled at `per_sec` tokens a second,
/// holding at most `burst`. `per_sec == 0` means "no limit" (an override
/// that lifts the server's default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second.
    pub per_sec: f64,
    /// Requests allowed at once after an idle spell (at least 1).
    pub burst: u32,
}

/// A project with its account settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectRecord {
    /// The project's name.
    pub name: String,
    /// When its first key or queue created it.
    pub created_at: Timestamp,
    /// The most it may spend in total, in micro-USD; `None`: no limit.
    pub credit_limit_micros: Option<u64>,
    /// What it has spent, in micro-USD, as flushed so far.
    pub spent_micros: u64,
    /// Its own rate limit, overriding the server's per-project default.
    pub rate: Option<RateLimit>,
}

/// One usage bucket to add: a project's calls of one capability in one
/// minute. `usage_flush` adds the counts to what is stored and adds
/// `cost_micros` to the project's `spent_micros`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    /// The project.
    pub project: String,
    /// Capability id.
    pub capability: String,
    /// Start of the minute (whole minute).
    pub minute: Timestamp,
    /// Successful calls.
    pub calls: u64,
    /// Calls that cost something.
    pub billable_calls: u64,
    /// Their cost, in micro-USD.
    pub cost_micros: u64,
}

/// `usage_query`: a project's usage in minutes `from <= minute < to`.
#[derive(Debug, Clone)]
pub struct UsageQuery {
    /// The project.
    pub project: String,
    /// Inclusive start.
    pub from: Timestamp,
    /// Exclusive end.
    pub to: Timestamp,
}

/// Usage of one capability, summed over a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageTotal {
    /// Capability id.
    pub capability: String,
    /// Successful calls.
    pub calls: u64,
    /// Calls that cost something.
    pub billable_calls: u64,
    /// Their cost, in micro-USD.
    pub cost_micros: u64,
}

/// `server_heartbeat`: server `server_id` is alive at `now`; answers how
/// many servers (itself included) were seen at or after `live_after`, and
/// forgets servers not seen since before it.
#[derive(Debug, Clone)]
pub struct ServerHeartbeat {
    /// A random id the server picked at start.
    pub server_id: String,
    /// The server's clock.
    pub now: Timestamp,
    /// Servers last seen before this are considered gone.
    pub live_after: Timestamp,
}
