//! Cron schedules and their runs. The store keeps them and advances them;
//! reading an expression (what the next tick is) is the server's.

use jiff::Timestamp;
use onceq_types::cron::{OverlapPolicy, RunOutcome};

/// Names a schedule inside a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronRef {
    /// The owning project.
    pub project: String,
    /// `cron_` and 32 hex digits.
    pub job_id: String,
}

/// Where a schedule's runs go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CronTarget {
    /// Published to this queue of the schedule's project.
    Queue(String),
    /// Delivered to this URL (already checked by the caller).
    Task(String),
}

/// What a schedule is: when, in which zone, where and what. Checked by the
/// caller; the store's CHECK constraints hold the same shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronSpec {
    /// A name to show.
    pub name: Option<String>,
    /// The expression, or `None` for a one-shot at `run_at`.
    pub cron_expr: Option<String>,
    /// The one-shot time, or `None` for an expression.
    pub run_at: Option<Timestamp>,
    /// The IANA zone.
    pub timezone: String,
    /// Where runs go.
    pub target: CronTarget,
    /// Each run's payload, as compact JSON.
    pub payload: String,
    /// Each run's headers, stored form (`None`: none).
    pub headers: Option<String>,
    /// The schedule ends after this many counted runs.
    pub max_runs: Option<i64>,
    /// `allow` or `skip`.
    pub overlap_policy: OverlapPolicy,
}

/// `cron_insert`.
#[derive(Debug, Clone)]
pub struct CronInsert {
    /// The owning project.
    pub project: String,
    /// The schedule.
    pub spec: CronSpec,
    /// Its first tick (`None`: it never fires).
    pub next_run_at: Option<Timestamp>,
    /// A create's dedupe key: a second insert with the same key in the
    /// same project stores nothing and answers the first schedule.
    pub idempotency_key: Option<String>,
    /// The most schedules the project may have (`None`: no cap): an
    /// insert that would pass it stores nothing and fails `Invalid` (a key
    /// naming an existing schedule is still answered with it).
    pub max_per_project: Option<u32>,
    /// The time of the call.
    pub now: Timestamp,
}

/// The message of `cron_insert`'s refusal past the project's cap.
pub fn cron_cap_message(project: &str, max: u32) -> String {
    format!("project {project:?} already has {max} cron schedules (the most a project may have)")
}

/// What `cron_insert` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronInserted {
    /// The schedule stored (or the one the key names).
    pub job: CronRecord,
    /// False when the idempotency key named an existing schedule.
    pub created: bool,
}

/// A schedule as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronRecord {
    /// Project and id.
    pub job: CronRef,
    /// What it is.
    pub spec: CronSpec,
    /// The tick it fires at next; `None` once ended.
    pub next_run_at: Option<Timestamp>,
    /// Counted runs so far.
    pub run_count: i64,
    /// Paused schedules are not due.
    pub paused: bool,
    /// When it was created.
    pub created_at: Timestamp,
    /// The message of its latest run that published one (what
    /// `overlap_policy: skip` checks).
    pub last_message_id: Option<String>,
    /// Recent runs, newest first: filled by `cron_get` only (at most
    /// `onceq_types::cron::RECENT_RUNS`).
    pub runs: Vec<CronRunRecord>,
}

/// One run as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronRunRecord {
    /// The tick.
    pub scheduled_at: Timestamp,
    /// When it fired.
    pub fired_at: Timestamp,
    /// The message it published.
    pub message_id: Option<String>,
    /// How it ended.
    pub outcome: RunOutcome,
    /// Why a delivery failed.
    pub error: Option<String>,
}

/// `cron_update`: replaces a schedule's spec and next tick.
#[derive(Debug, Clone)]
pub struct CronUpdate {
    /// Which schedule.
    pub job: CronRef,
    /// Its new spec (the caller merged the changes into the old one).
    pub spec: CronSpec,
    /// Its next tick under the new spec.
    pub next_run_at: Option<Timestamp>,
    /// The time of the call.
    pub now: Timestamp,
}

/// `cron_pause`: pauses, or resumes with a next tick.
#[derive(Debug, Clone)]
pub struct CronPause {
    /// Which schedule.
    pub job: CronRef,
    /// True to pause, false to resume.
    pub paused: bool,
    /// On resume, the next tick to write; ignored on pause (the tick is
    /// kept as it was).
    pub next_run_at: Option<Timestamp>,
    /// The time of the call.
    pub now: Timestamp,
}

/// What `cron_due` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronDue {
    /// Unpaused schedules whose next tick is at or before `now`, earliest
    /// first (at most the limit asked for), without their runs.
    pub due: Vec<CronRecord>,
    /// The earliest next tick of an unpaused schedule after `now`: when to
    /// look again.
    pub next_at: Option<Timestamp>,
}

/// `cron_advance`: records a fired run and moves the schedule past it, in
/// one transaction, only if its next tick is still `scheduled_at`.
#[derive(Debug, Clone)]
pub struct CronAdvance {
    /// The schedule (its id alone: the firing loop serves every project).
    pub job_id: String,
    /// The tick fired; the schedule advances only if this is still its
    /// next tick, so of two servers firing one tick one advances.
    pub scheduled_at: Timestamp,
    /// The tick after it (`None`: the schedule ends).
    pub next_run_at: Option<Timestamp>,
    /// Whether the run counts toward `max_runs` (a skipped one does not).
    pub counted: bool,
    /// The run to record.
    pub run: CronRunRecord,
}

/// `cron_run_outcome`: a task run's delivery ended. It may end before the
/// firing server recorded the run: then the run is recorded with this
/// outcome, and the advance fills in its firing.
#[derive(Debug, Clone)]
pub struct CronRunOutcome {
    /// The schedule.
    pub job_id: String,
    /// The run's tick.
    pub scheduled_at: Timestamp,
    /// The message delivered.
    pub message_id: String,
    /// When the delivery ended (the run's `fired_at` until the advance
    /// records its own).
    pub now: Timestamp,
    /// `delivered` or `failed`.
    pub outcome: RunOutcome,
    /// Why it failed.
    pub error: Option<String>,
}
