//! Cron schedules (queue-api-2.md §7, `docs/api.md` "Cron"): the bodies of
//! the calls that manage them, a schedule as the API shows it, and its
//! recent runs.
//!
//! A schedule has a *when* (`cron_expr`, or a one-shot `run_at`) in a time
//! zone, and a *target*: a queue of the caller's project (each run
//! publishes `payload` and `headers` there) or a `task` URL (each run is
//! delivered there as a push delivery is). Each run's message carries the
//! dedupe key [`dedupe_key`], so a second firing of one run is a replay.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::request::request;

/// How many recent runs a schedule keeps (and `get` shows).
pub const RECENT_RUNS: usize = 20;
/// The longest schedule name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;
/// The longest `cron_expr`, in bytes.
pub const MAX_EXPR_BYTES: usize = 255;
/// The most runs `max_runs` may ask for.
pub const MAX_RUNS: i64 = 1_000_000_000;
/// The most retries `retry` may ask for a task run's delivery.
pub const MAX_TASK_RETRY: i64 = 100;
/// A task run's delivery retries when `retry` is left out (a queue's
/// default `max_retries`).
pub const DEFAULT_TASK_RETRY: i64 = 3;

/// The dedupe key of a schedule's run at `scheduled_at`: every firing of
/// that run publishes with it, so only the first stores a message.
pub fn dedupe_key(job_id: &str, scheduled_at: Timestamp) -> String {
    format!("cron:{job_id}:{scheduled_at}")
}

request! {
    /// `POST /v1/cron/create`. Exactly one of `cron_expr` and `run_at`, and
    /// exactly one of `queue` and `task`.
    pub struct CronCreate {
        /// A name to show; any text up to 200 bytes.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(max_length = 200))]
        pub name: Option<String>,
        /// Five fields (`min hour dom month dow`), six with seconds first,
        /// or a name: `@yearly`, `@monthly`, `@weekly`, `@daily`, `@hourly`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
        pub cron_expr: Option<String>,
        /// One run at this RFC 3339 time.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(format = DateTime))]
        pub run_at: Option<String>,
        /// The IANA zone `cron_expr` is read in; default `UTC`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub timezone: Option<String>,
        /// A queue of the caller's project each run publishes to (the
        /// first run creates it if it does not exist yet).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")
        )]
        pub queue: Option<String>,
        /// A URL each run is delivered to, as a push delivery is (signed
        /// with `secret`, or a generated one; the answer shows it).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
        pub task: Option<String>,
        /// What each run publishes (any JSON but `null`); default `{}`.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::payload))]
        pub payload: Option<Box<RawValue>>,
        /// Headers of each run's message (the rules of publish's).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::headers))]
        pub headers: Option<Box<RawValue>>,
        /// The schedule ends after this many runs.
        #[whole(minimum = 1, maximum = 1000000000)]
        pub max_runs: Option<i64>,
        /// `allow` (default) or `skip`: skip a run while the previous run's
        /// message is still held.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overlap_policy: Option<OverlapPolicy>,
        /// A repeated create with the same key answers the first schedule
        /// (a task schedule's `secret` included).
        #[token]
        pub idempotency_key: Option<String>,
        /// `task` only: the secret each run's delivery is signed with
        /// (16 to 255 bytes of visible ASCII); generated (`whsec_…`) when
        /// left out. Either way the answer shows it.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(pattern = "^[!-~]{16,255}$"))]
        pub secret: Option<String>,
        /// `task` only: how many times a run's failed delivery is retried
        /// (with backoff) before the run is recorded failed; 0..=100,
        /// default 3.
        #[whole(minimum = 0, maximum = 100)]
        pub retry: Option<i64>,
        /// `task` only: each delivery attempt's timeout in seconds, 1..=300,
        /// default 30.
        #[whole(minimum = 1, maximum = 300)]
        pub timeout_seconds: Option<i64>,
        /// Not supported: refused (400) with a hint. A run that fails emits
        /// the account webhook event `cron.run_failed`, naming the schedule.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
        pub on_failure_webhook: Option<serde_json::Value>,
    }
}

request! {
    /// `POST /v1/cron/update`: the fields given replace the schedule's;
    /// `cron_expr` and `run_at` replace each other, as `queue` and `task` do.
    pub struct CronUpdate {
        /// The schedule.
        #[required_token]
        pub job_id: Option<String>,
        /// A new name.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(max_length = 200))]
        pub name: Option<String>,
        /// A new expression (the schedule stops being one-shot).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 255))]
        pub cron_expr: Option<String>,
        /// A new one-shot time (the expression is dropped).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(format = DateTime))]
        pub run_at: Option<String>,
        /// A new zone.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub timezone: Option<String>,
        /// A new target queue (drops `task`).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(
            feature = "openapi",
            schema(pattern = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$")
        )]
        pub queue: Option<String>,
        /// A new target URL (drops `queue`).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2048))]
        pub task: Option<String>,
        /// A new payload.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::payload))]
        pub payload: Option<Box<RawValue>>,
        /// New headers.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::headers))]
        pub headers: Option<Box<RawValue>>,
        /// A new run limit (counting the runs so far).
        #[whole(minimum = 1, maximum = 1000000000)]
        pub max_runs: Option<i64>,
        /// A new overlap policy.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overlap_policy: Option<OverlapPolicy>,
        /// Refused (400): a task schedule's secret is set at create.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
        pub secret: Option<serde_json::Value>,
        /// Refused (400): a task schedule's retries are set at create.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
        pub retry: Option<serde_json::Value>,
        /// Refused (400): a task schedule's timeout is set at create.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
        pub timeout_seconds: Option<serde_json::Value>,
        /// Refused (400), as at create.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
        pub on_failure_webhook: Option<serde_json::Value>,
    }
}

/// What a run does while the previous run's message is still held.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlapPolicy {
    /// Publish anyway.
    #[default]
    Allow,
    /// Record the run as skipped and publish nothing.
    Skip,
}

impl OverlapPolicy {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OverlapPolicy::Allow => "allow",
            OverlapPolicy::Skip => "skip",
        }
    }
}

/// How a run ended.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// Its message was stored (queue), or is being delivered (task).
    Published,
    /// Skipped by `overlap_policy: skip`: nothing was published.
    Skipped,
    /// The task URL answered 2xx.
    Delivered,
    /// The task URL's delivery failed for good (`error` says why).
    Failed,
}

impl RunOutcome {
    /// The stored and wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Published => "published",
            RunOutcome::Skipped => "skipped",
            RunOutcome::Delivered => "delivered",
            RunOutcome::Failed => "failed",
        }
    }

    /// The outcome a stored spelling names.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "published" => RunOutcome::Published,
            "skipped" => RunOutcome::Skipped,
            "delivered" => RunOutcome::Delivered,
            "failed" => RunOutcome::Failed,
            _ => return None,
        })
    }
}

/// One run of a schedule.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronRun {
    /// The tick it is the run of (part of its dedupe key).
    pub scheduled_at: Timestamp,
    /// When a server fired it.
    pub fired_at: Timestamp,
    /// The message it published; `null` when skipped.
    pub message_id: Option<String>,
    /// How it ended.
    pub outcome: RunOutcome,
    /// Why a task delivery failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A schedule as the API shows it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CronJob {
    /// `cron_` and 32 hex digits.
    pub job_id: String,
    /// Its name, if given.
    pub name: Option<String>,
    /// Its expression, or `null` for a one-shot.
    pub cron_expr: Option<String>,
    /// Its one-shot time, or `null`.
    pub run_at: Option<Timestamp>,
    /// The IANA zone it is read in.
    pub timezone: String,
    /// When it fires next; `null` once it has ended (one-shot fired,
    /// `max_runs` reached).
    pub next_run_at: Option<Timestamp>,
    /// The queue it publishes to, or `null`.
    pub queue: Option<String>,
    /// The URL it delivers to, or `null`.
    pub task: Option<String>,
    /// What each run publishes: any JSON value but null (`{}` when the
    /// create gave none); `null` when withheld (`payload_withheld`).
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::openapi::payload_or_withheld))]
    pub payload: Option<Box<RawValue>>,
    /// `true` when the key may not read payloads (it lacks `peek`,
    /// [`crate::capability::PAYLOAD_ACTION`]): `payload` is then `null`.
    #[serde(default)]
    pub payload_withheld: bool,
    /// Headers of each run's message.
    pub headers: crate::Headers,
    /// Its run limit.
    pub max_runs: Option<i64>,
    /// `allow` or `skip`.
    pub overlap_policy: OverlapPolicy,
    /// Runs so far that published (skipped ones do not count).
    pub run_count: i64,
    /// Paused schedules do not fire.
    pub paused: bool,
    /// When it was created.
    pub created_at: Timestamp,
    /// Its recent runs, newest first (at most 20; empty in `list`).
    pub runs: Vec<CronRun>,
    /// A task schedule's signing secret (`whsec_…`): only in the answer
    /// that created it, as a push subscription's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The answer of `cron/delete`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CronDeleted {
    /// The schedule's id.
    pub job_id: String,
    /// Always true: an unknown schedule is a 404.
    pub deleted: bool,
}
