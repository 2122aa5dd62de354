//! The bodies of `cron/create` and `cron/update`, checked and turned into
//! a [`CronSpec`] (and a task's [`TaskDelivery`]), without I/O (the
//! handler then checks the key may use the queue; the fuzz target drives
//! these). Every refusal is a 400 naming its field, with a hint; no field
//! a client sends is ignored (`secret`, `retry`, `timeout_seconds` are a
//! task's, `on_failure_webhook` is refused).

use jiff::Timestamp;
use onceq_store::{CronSpec, CronTarget};
use onceq_types::{
    cron::{
        CronCreate, CronUpdate, DEFAULT_TASK_RETRY, MAX_EXPR_BYTES, MAX_NAME_BYTES, MAX_RUNS,
        MAX_TASK_RETRY,
    },
    push::{DEFAULT_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS},
};
use serde_json::value::RawValue;

use super::schedule::{self, Schedule};
use crate::{
    ApiError, headers,
    outbound::{config::PushConfig, guard::Guard, secret},
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
    /// A task schedule's delivery (its subscription and queue); the
    /// defaults for a queue schedule, which has none.
    pub delivery: TaskDelivery,
}

/// How a task schedule's runs are delivered: its push subscription's
/// secret and timeout, its queue's retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDelivery {
    /// The caller's secret, checked; `None`: one is generated.
    pub secret: Option<String>,
    /// Retries of a failed delivery (the task queue's `max_retries`).
    pub retry: i64,
    /// Each attempt's timeout, seconds (the subscription's).
    pub timeout_seconds: i64,
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
    if req.on_failure_webhook.is_some() {
        return Err(on_failure_webhook());
    }
    let (cron_expr, run_at) = when(req.cron_expr, req.run_at)?;
    let timezone = req.timezone.unwrap_or_else(|| "UTC".to_owned());
    let target = target(req.queue, req.task, push)?;
    let delivery = delivery(&target, req.secret, req.retry, req.timeout_seconds)?;
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
        delivery,
    })
}

/// `on_failure_webhook` (sent by clients written for Infrai) is refused:
/// a per-schedule URL would need a delivery path of its own, and the
/// account webhooks already carry the event, signed and retried.
fn on_failure_webhook() -> ApiError {
    refused(
        "on_failure_webhook",
        "is not supported: a failed run emits the account webhook event cron.run_failed, which names the schedule (schedule_id)",
        "drop on_failure_webhook and register the URL once for the project: POST /v1/account/webhooks/register with {\"url\": ..., \"events\": [\"cron.run_failed\"]}",
    )
}

/// A task's delivery settings, checked; refused on a queue schedule
/// (naming every one given), whose runs are read by its consumers.
fn delivery(
    target: &CronTarget,
    secret: Option<String>,
    retry: Option<i64>,
    timeout_seconds: Option<i64>,
) -> Result<TaskDelivery, ApiError> {
    if let CronTarget::Queue(_) = target {
        let given: Vec<&str> = [
            ("secret", secret.is_some()),
            ("retry", retry.is_some()),
            ("timeout_seconds", timeout_seconds.is_some()),
        ]
        .into_iter()
        .filter_map(|(f, is)| is.then_some(f))
        .collect();
        if let Some(first) = given.first() {
            return Err(refused(
                first,
                format!(
                    "{} set how a task's runs are delivered; a queue schedule publishes into its queue, whose consumers read it (got {})",
                    "secret, retry and timeout_seconds",
                    given.join(", ")
                ),
                "drop them, or send task (a URL) instead of queue; a queue's own retries are its max_retries (POST /v1/queue/update)",
            ));
        }
    }
    let secret = secret
        .map(|s| {
            secret::checked(s).map_err(|e| {
                ApiError::invalid(e.message().to_owned()).with_hint(
                    "send 16 to 255 visible ASCII characters, or leave secret out for a generated one",
                )
            })
        })
        .transpose()?;
    let retry = match retry {
        Some(n) if !(0..=MAX_TASK_RETRY).contains(&n) => {
            return Err(refused(
                "retry",
                format!("must be between 0 and {MAX_TASK_RETRY} (got {n})"),
                "send how many times a failed run's delivery is tried again, or leave retry out for 3",
            ));
        }
        Some(n) => n,
        None => DEFAULT_TASK_RETRY,
    };
    let timeout_seconds = match timeout_seconds {
        Some(n) if !(1..=MAX_TIMEOUT_SECONDS).contains(&n) => {
            return Err(refused(
                "timeout_seconds",
                format!("must be between 1 and {MAX_TIMEOUT_SECONDS} (got {n})"),
                "send each delivery attempt's timeout in seconds, or leave timeout_seconds out for 30",
            ));
        }
        Some(n) => n,
        None => DEFAULT_TIMEOUT_SECONDS,
    };
    Ok(TaskDelivery {
        secret,
        retry,
        timeout_seconds,
    })
}

/// Refuses the task settings on an update (naming every one given): they
/// belong to the task's subscription and queue, made at create.
fn refuse_delivery_changes(req: &CronUpdate) -> Result<(), ApiError> {
    if req.on_failure_webhook.is_some() {
        return Err(on_failure_webhook());
    }
    let given: Vec<&str> = [
        ("secret", req.secret.is_some()),
        ("retry", req.retry.is_some()),
        ("timeout_seconds", req.timeout_seconds.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, is)| is.then_some(f))
    .collect();
    match given.first() {
        None => Ok(()),
        Some(first) => Err(refused(
            first,
            format!(
                "a task schedule's delivery settings are set when it is created and cannot change (got {})",
                given.join(", ")
            ),
            "delete the schedule and create it again with the new settings",
        )),
    }
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
    refuse_delivery_changes(&req)?;
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
