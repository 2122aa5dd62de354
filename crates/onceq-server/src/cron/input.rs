//! The bodies of `cron/create` and `cron/update`, checked and turned into
//! a [`CronSpec`], without I/O (the handler then checks that the queue
//! exists; the fuzz target drives these). Every refusal is a 400 naming
//! its field, with a hint.

use jiff::Timestamp;
use onceq_store::{CronSpec, CronTarget};
use onceq_types::cron::{CronCreate, CronUpdate, MAX_EXPR_BYTES, MAX_NAME_BYTES, MAX_RUNS};
use serde_json::value::RawValue;

use super::schedule::{self, Schedule};
use crate::{
    ApiError, headers,
    outbound::{config::PushConfig, guard::Guard},
    validate,
};

/// A checked create.
#[derive(Debug)]
pub struct CreateInput {
    /// The schedule to store.
    pub spec: CronSpec,
    /// Its *when*, parsed.
    pub schedule: Schedule,
    /// Create's own dedupe key.
    pub idempotency_key: Option<String>,
}

/// A 400 naming `field`, with a hint of what to send instead.
fn refused(field: &str, why: impl std::fmt::Display, hint: &str) -> ApiError {
    ApiError::invalid(format!("{field}: {why}")).with_hint(hint)
}

const EXPR_HINT: &str = "send five fields (min hour dom month dow), six with seconds first, or @yearly, @monthly, @weekly, @daily, @hourly";
const ZONE_HINT: &str =
    "send an IANA time zone name such as Europe/Paris, or leave timezone out for UTC";
const WHEN_HINT: &str = "send cron_expr for a repeating schedule or run_at for one run, not both";
const TARGET_HINT: &str =
    "send queue to publish into a queue of this project, or task to deliver to a URL, not both";

/// Checks a create's body.
pub fn create(req: CronCreate, push: &PushConfig) -> Result<CreateInput, ApiError> {
    let (cron_expr, run_at) = when(req.cron_expr, req.run_at)?;
    let timezone = req.timezone.unwrap_or_else(|| "UTC".to_owned());
    let target = target(req.queue, req.task, push)?;
    let spec = CronSpec {
        name: name(req.name)?,
        cron_expr,
        run_at,
        timezone,
        target,
        payload: payload(req.payload)?,
        headers: headers::parse("headers", req.headers)?,
        max_runs: max_runs(req.max_runs)?,
        overlap_policy: req.overlap_policy.unwrap_or_default(),
    };
    headers::check_size("", &spec.payload, spec.headers.as_deref())?;
    let schedule = parsed(&spec)?;
    Ok(CreateInput {
        spec,
        schedule,
        idempotency_key: validate::opt_token("idempotency_key", req.idempotency_key)?,
    })
}

/// The job an update names.
pub fn update_job_id(req: &CronUpdate) -> Result<String, ApiError> {
    validate::required_token("job_id", req.job_id.clone())
}

/// Applies an update's fields to `spec` (a new *when* replaces the old
/// one, a new target the old one) and parses the result.
pub fn update(
    spec: &mut CronSpec,
    req: CronUpdate,
    push: &PushConfig,
) -> Result<Schedule, ApiError> {
    if req.cron_expr.is_some() || req.run_at.is_some() {
        (spec.cron_expr, spec.run_at) = when(req.cron_expr, req.run_at)?;
    }
    if req.queue.is_some() || req.task.is_some() {
        spec.target = target(req.queue, req.task, push)?;
    }
    if let Some(zone) = req.timezone {
        spec.timezone = zone;
    }
    if req.name.is_some() {
        spec.name = name(req.name)?;
    }
    if req.payload.is_some() {
        spec.payload = payload(req.payload)?;
    }
    if req.headers.is_some() {
        spec.headers = headers::parse("headers", req.headers)?;
    }
    if req.max_runs.is_some() {
        spec.max_runs = max_runs(req.max_runs)?;
    }
    if let Some(policy) = req.overlap_policy {
        spec.overlap_policy = policy;
    }
    headers::check_size("", &spec.payload, spec.headers.as_deref())?;
    parsed(spec)
}

/// A stored spec's *when*, parsed (the firing loop's view of it too).
pub fn parsed(spec: &CronSpec) -> Result<Schedule, ApiError> {
    match (&spec.cron_expr, spec.run_at) {
        (Some(expr), _) => {
            let cron = schedule::parse_expr(expr).map_err(|e| {
                refused(
                    "cron_expr",
                    format!("{expr:?} is not a cron expression: {}", e.0),
                    EXPR_HINT,
                )
            })?;
            let zone = schedule::parse_zone(&spec.timezone)
                .map_err(|e| refused("timezone", e.0, ZONE_HINT))?;
            Ok(Schedule::Cron(Box::new(cron), zone))
        }
        (None, Some(at)) => {
            // A one-shot's zone is only shown back, but it must be one.
            schedule::parse_zone(&spec.timezone)
                .map_err(|e| refused("timezone", e.0, ZONE_HINT))?;
            Ok(Schedule::Once(at))
        }
        (None, None) => Err(refused(
            "cron_expr",
            "cron_expr or run_at is required",
            WHEN_HINT,
        )),
    }
}

fn when(
    cron_expr: Option<String>,
    run_at: Option<String>,
) -> Result<(Option<String>, Option<Timestamp>), ApiError> {
    match (cron_expr, run_at) {
        (Some(_), Some(_)) => Err(refused(
            "cron_expr",
            "cron_expr and run_at are both given; a schedule has one",
            WHEN_HINT,
        )),
        (None, None) => Err(refused(
            "cron_expr",
            "cron_expr or run_at is required",
            WHEN_HINT,
        )),
        (Some(expr), None) => {
            if expr.trim().is_empty() || expr.len() > MAX_EXPR_BYTES {
                return Err(refused(
                    "cron_expr",
                    format!("must be 1 to {MAX_EXPR_BYTES} bytes (got {})", expr.len()),
                    EXPR_HINT,
                ));
            }
            // croner reads a tab or a newline as a field separator; a
            // stored expression must read the same in every tool that
            // shows it (and in logs), so control characters are refused.
            if let Some((at, c)) = expr.char_indices().find(|(_, c)| c.is_control()) {
                return Err(refused(
                    "cron_expr",
                    format!("must not contain control characters (got {c:?} at byte {at})"),
                    "separate the fields with spaces",
                ));
            }
            Ok((Some(expr), None))
        }
        (None, Some(at)) => {
            let ts = validate::timestamp("run_at", &at, "2026-12-24T18:00:00Z")?;
            // Stored to the microsecond on both backends: answer what a
            // later read returns.
            let micros = Timestamp::from_microsecond(ts.as_microsecond()).unwrap_or(ts);
            Ok((None, Some(micros)))
        }
    }
}

fn target(
    queue: Option<String>,
    task: Option<String>,
    push: &PushConfig,
) -> Result<CronTarget, ApiError> {
    match (queue, task) {
        (Some(_), Some(_)) => Err(refused(
            "queue",
            "queue and task are both given; a schedule has one target",
            TARGET_HINT,
        )),
        (None, None) => Err(refused("queue", "queue or task is required", TARGET_HINT)),
        (Some(queue), None) => {
            validate::queue_name("queue", &queue)?;
            Ok(CronTarget::Queue(queue))
        }
        (None, Some(task)) => {
            let url = Guard::new(push).check_url("task", &task).map_err(|e| {
                ApiError::invalid(e).with_hint(
                    "send an https:// URL of a public host (http:// and loopback only where the operator allows them)",
                )
            })?;
            Ok(CronTarget::Task(url.into()))
        }
    }
}

fn name(name: Option<String>) -> Result<Option<String>, ApiError> {
    match name {
        Some(n) if n.len() > MAX_NAME_BYTES || n.chars().any(char::is_control) => Err(refused(
            "name",
            format!(
                "must be at most {MAX_NAME_BYTES} bytes without control characters (got {} bytes)",
                n.len()
            ),
            "send a short label, or leave name out",
        )),
        other => Ok(other),
    }
}

fn payload(raw: Option<Box<RawValue>>) -> Result<String, ApiError> {
    match raw {
        // Absent (or null): each run publishes an empty object.
        None => Ok("{}".to_owned()),
        Some(raw) if raw.get().trim() == "null" => Ok("{}".to_owned()),
        raw => validate::payload("payload", raw),
    }
}

fn max_runs(n: Option<i64>) -> Result<Option<i64>, ApiError> {
    match n {
        Some(n) if !(1..=MAX_RUNS).contains(&n) => Err(refused(
            "max_runs",
            format!("must be between 1 and {MAX_RUNS} (got {n})"),
            "leave max_runs out for a schedule without end",
        )),
        other => Ok(other),
    }
}
