//! Cron schedules (docs/cron.md): create, list, get (with recent runs),
//! update, pause, resume, delete. Firing is `maintenance::cron_firing`.

use axum::{
    Extension,
    extract::{FromRequestParts, State},
    http::request::Parts,
    response::{IntoResponse, Response},
};
use onceq_store::{CronInsert, CronPause, CronRecord, CronRef, CronTarget, CronUpdate as Update};
use onceq_types::{
    ErrorCode,
    cron::{CronCreate, CronDeleted, CronJob, CronUpdate},
    reply::Items,
};
use utoipa::IntoParams;

use crate::{
    ApiError, AppState,
    caller::Caller,
    cron::{input, shown, task},
    envelope::Reply,
    extract::Body,
    idempotency::{Reread, Unchanged},
    openapi::responses::{
        InvalidParams, NotFound, Ok, OkList, Refused, StoreFailed, TimedOut, TooLarge, Unauthorized,
    },
    outbound::secret::generated as generated_secret,
    validate,
};

/// The store's refusal of a create: past the project's cap on schedules, a
/// 400 saying so, with what to do.
fn schedule_refused(state: &AppState, project: &str, e: onceq_store::StoreError) -> ApiError {
    let max = state.config.cron_max_schedules_per_project;
    match e {
        onceq_store::StoreError::Invalid(m) if m == onceq_store::cron_cap_message(project, max) => {
            ApiError::invalid(m).with_hint(
                "delete schedules the project no longer needs (cron/delete), or ask the operator to raise --cron-max-schedules-per-project",
            )
        }
        e => ApiError::from_store(e, ""),
    }
}

/// `POST /v1/cron/create`.
#[utoipa::path(
    post,
    path = "/v1/cron/create",
    operation_id = "cron_create",
    tag = "cron",
    summary = "Create a cron schedule",
    description = "A schedule publishes payload (and headers) into a queue of the key's project (created by the first run if it does not exist yet, as a first publish creates it) at each tick of cron_expr (five fields, six with seconds first, or @hourly-style names) read in timezone (IANA, default UTC), or once at run_at. Each run is published exactly once, however many servers share the database: its message carries the idempotency key cron:<job_id>:<scheduled time>. A repeated create with the same idempotency_key answers the first schedule (metadata.idempotent_replay: true), a task's secret included. A task URL gets a queue of its own (cron-task-<id>) with a push subscription to it: each run is delivered as a push delivery is (signed with secret, the caller's or a generated one this answer shows; retried retry times, default 3; each attempt bounded by timeout_seconds, default 30; SSRF-guarded). 400 for a bad expression or zone, a control character in cron_expr, a run_at out of range, both or neither of cron_expr and run_at, both or neither of queue and task, secret/retry/timeout_seconds on a queue schedule, any on_failure_webhook (register an account webhook for cron.run_failed instead), a project already at its cap on schedules (--cron-max-schedules-per-project, default 1000). 403 for a queue the key's patterns do not match.",
    request_body = CronCreate,
    responses(Ok<CronJob>, InvalidParams, Unauthorized, Refused, TooLarge, TimedOut, StoreFailed)
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<CronCreate>,
) -> Result<Reply<CronJob>, ApiError> {
    let input = input::create(req, &state.config.push)?;
    check_target(&caller, &input.spec.target)?;
    let delivery = input.delivery.clone();
    let body_key = input.idempotency_key.clone().unwrap_or_default();
    let now = state.clock.now();
    let next_run_at = input.schedule.first(now).map_err(|e| {
        ApiError::invalid(format!("cron_expr: {}", e.0))
            .with_hint("check the day of month and month: the expression must match some date")
    })?;
    let task_url = match &input.spec.target {
        CronTarget::Task(url) => Some(url.clone()),
        CronTarget::Queue(_) => None,
    };
    let inserted = state
        .store()
        .cron_insert(CronInsert {
            project: caller.project.clone(),
            spec: input.spec,
            next_run_at,
            idempotency_key: input.idempotency_key,
            max_per_project: match state.config.cron_max_schedules_per_project {
                0 => None,
                max => Some(max),
            },
            now,
        })
        .await
        .map_err(|e| schedule_refused(&state, &caller.project, e))?;
    let mut secret = None;
    let job = job_ref(&caller, &inserted.job.job.job_id);
    match (task_url, inserted.created) {
        (Some(url), true) => {
            let signing = delivery.secret.clone().unwrap_or_else(generated_secret);
            match task::provision(&state, &job.project, &job.job_id, &url, signing, &delivery).await
            {
                Ok(subscription) => secret = Some(subscription.secret),
                Err(e) => {
                    // Nothing half-stored: the schedule goes with its queue.
                    let _ = task::unprovision(&state, &job.project, &job.job_id).await;
                    let _ = state.store().cron_delete(&job).await;
                    return Err(ApiError::from_store(e, ""));
                }
            }
        }
        // A create retried with its idempotency_key answers what the first
        // did, the secret included: a client that lost the first answer
        // learns it here (and nowhere else).
        (Some(_), false) => {
            let found = task::secret_of(&state, &job.project, &job.job_id)
                .await
                .map_err(|e| ApiError::from_store(e, ""))?;
            match found {
                Some(s) => secret = Some(s),
                // The first create is still making its subscription.
                None => return Err(ApiError::in_flight(1, &body_key)),
            }
        }
        (None, _) => {}
    }
    state.cron_wake.notify_one();
    let shown = CronJob {
        secret,
        ..shown::job(inserted.job, caller.payloads())?
    };
    Ok(caller.reply(shown).replay(!inserted.created))
}

/// A target the caller may use: a queue of its project that its key's
/// patterns allow (it need not exist yet: a run creates it, as a publish
/// does, queue-api.md), or a task URL (already checked by the SSRF guard).
fn check_target(caller: &Caller, target: &CronTarget) -> Result<(), ApiError> {
    match target {
        CronTarget::Queue(queue) => caller.queue(queue).map(drop),
        CronTarget::Task(_) => Ok(()),
    }
}

/// `GET /v1/cron/list`.
#[utoipa::path(
    get,
    path = "/v1/cron/list",
    operation_id = "cron_list",
    tag = "cron",
    summary = "The project's cron schedules",
    description = "Oldest first, each without its runs (GET /v1/cron/get/{job_id} shows them). A key limited to some queues sees only the schedules publishing into them (and every task schedule).",
    responses(OkList<CronJob>, Unauthorized, Refused, StoreFailed)
)]
pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Reply<Items<CronJob>>, ApiError> {
    let items = state
        .store()
        .cron_list(&caller.project)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .into_iter()
        .filter(|j| visible(&caller, j))
        .map(|j| shown::job(j, caller.payloads()))
        .collect::<Result<_, _>>()?;
    Ok(caller.reply(Items { items }))
}

/// `GET /v1/cron/get/{job_id}`.
#[utoipa::path(
    get,
    path = "/v1/cron/get/{job_id}",
    operation_id = "cron_get",
    tag = "cron",
    summary = "A cron schedule with its recent runs",
    description = "runs: the 20 newest, newest first, each {scheduled_at, fired_at, message_id, outcome}. 404 NOT_FOUND for an unknown job_id.",
    params(JobParam),
    responses(Ok<CronJob>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    JobPath(job_id): JobPath,
) -> Result<Reply<CronJob>, ApiError> {
    let job = found(&state, &caller, &job_id).await?;
    Ok(caller.reply(shown::job(job, caller.payloads())?))
}

/// The schedule `job_id` of the caller's project, if the key may use it:
/// 403 for one publishing into a queue its patterns do not match (as that
/// queue's own calls answer; the dashboard hides it the same way).
async fn found(state: &AppState, caller: &Caller, job_id: &str) -> Result<CronRecord, ApiError> {
    let job = state
        .store()
        .cron_get(&job_ref(caller, job_id))
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(job_id))?;
    if let CronTarget::Queue(queue) = &job.spec.target {
        caller.queue(queue)?;
    }
    Ok(job)
}

/// Whether the key's patterns let it see `job` (a task schedule's queue is
/// its own: every key of the project sees it).
fn visible(caller: &Caller, job: &CronRecord) -> bool {
    match &job.spec.target {
        CronTarget::Queue(queue) => caller.may_use(queue),
        CronTarget::Task(_) => true,
    }
}

fn job_ref(caller: &Caller, job_id: &str) -> CronRef {
    CronRef {
        project: caller.project.clone(),
        job_id: job_id.to_owned(),
    }
}

fn not_found(job_id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("cron job {job_id:?} not found in this project"),
    )
    .with_hint("GET /v1/cron/list shows the project's schedules and their job_id")
}

/// `POST /v1/cron/update`.
#[utoipa::path(
    post,
    path = "/v1/cron/update",
    operation_id = "cron_update",
    tag = "cron",
    summary = "Change a cron schedule",
    description = "The fields given replace the schedule's (cron_expr and run_at replace each other, as queue and task do); the next tick is computed again from now. Runs already fired stay as they were. 404 NOT_FOUND for an unknown job_id.",
    request_body = CronUpdate,
    responses(Ok<CronJob>, InvalidParams, Unauthorized, Refused, NotFound, TooLarge, TimedOut, StoreFailed)
)]
pub async fn update(
    State(state): State<AppState>,
    caller: Caller,
    Body(req): Body<CronUpdate>,
) -> Result<Reply<CronJob>, ApiError> {
    let job_id = input::update_job_id(&req)?;
    let old = found(&state, &caller, &job_id).await?;
    let mut spec = old.spec.clone();
    let schedule = input::update(&mut spec, req, &state.config.push)?;
    if spec.target != old.spec.target {
        let task = |t: &CronTarget| matches!(t, CronTarget::Task(_));
        if task(&spec.target) || task(&old.spec.target) {
            // A task schedule owns its queue and its subscription's secret:
            // a new URL is a new schedule.
            return Err(ApiError::invalid(
                "task: the target of a task schedule cannot change, nor can a queue schedule become one",
            )
            .with_hint("delete the schedule and create a new one with the new target"));
        }
        check_target(&caller, &spec.target)?;
    }
    let now = state.clock.now();
    let ended = spec.max_runs.is_some_and(|max| old.run_count >= max);
    let next_run_at = if ended {
        None
    } else if spec.cron_expr.is_none() && spec.run_at == old.spec.run_at {
        // The same one-shot: fired or not, as it was.
        old.next_run_at
    } else {
        schedule
            .first(now)
            .map_err(|e| ApiError::invalid(format!("cron_expr: {}", e.0)))?
    };
    let updated = state
        .store()
        .cron_update(Update {
            job: job_ref(&caller, &job_id),
            spec,
            next_run_at,
            now,
        })
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(&job_id))?;
    state.cron_wake.notify_one();
    Ok(caller.reply(shown::job(updated, caller.payloads())?))
}

/// `POST /v1/cron/pause/{job_id}`.
#[utoipa::path(
    post,
    path = "/v1/cron/pause/{job_id}",
    operation_id = "cron_pause",
    tag = "cron",
    summary = "Pause a cron schedule",
    description = "A paused schedule does not fire; its next tick is kept as it was. Pausing a paused schedule changes nothing. 404 NOT_FOUND for an unknown job_id.",
    params(JobParam),
    responses(Ok<CronJob>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn pause(
    State(state): State<AppState>,
    caller: Caller,
    JobPath(job_id): JobPath,
    reread: Option<Extension<Reread>>,
) -> Result<Response, ApiError> {
    set_paused(state, caller, job_id, true, reread.is_some()).await
}

/// `POST /v1/cron/resume/{job_id}`.
#[utoipa::path(
    post,
    path = "/v1/cron/resume/{job_id}",
    operation_id = "cron_resume",
    tag = "cron",
    summary = "Resume a paused cron schedule",
    description = "The ticks that passed while it was paused are skipped: an expression's next tick is the first after now; a one-shot whose time passed fires at once. Resuming a running schedule changes nothing. 404 NOT_FOUND for an unknown job_id.",
    params(JobParam),
    responses(Ok<CronJob>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn resume(
    State(state): State<AppState>,
    caller: Caller,
    JobPath(job_id): JobPath,
    reread: Option<Extension<Reread>>,
) -> Result<Response, ApiError> {
    set_paused(state, caller, job_id, false, reread.is_some()).await
}

/// A pause or resume; with `reread` (a replay of one that changed
/// nothing, `idempotency::Reread`) only the schedule as it is now. One
/// that changes nothing marks its answer `Unchanged`, so the call ledger
/// keeps a mark, not the schedule (whose payload may be large).
async fn set_paused(
    state: AppState,
    caller: Caller,
    job_id: String,
    paused: bool,
    reread: bool,
) -> Result<Response, ApiError> {
    // The key must be allowed the schedule's queue (403 otherwise).
    let current = found(&state, &caller, &job_id).await?;
    let (record, changed) = match reread {
        true => (current, false),
        false => set_job_paused(&state, job_ref(&caller, &job_id), paused).await?,
    };
    let mut res = caller
        .reply(shown::job(record, caller.payloads())?)
        .into_response();
    if !changed {
        res.extensions_mut().insert(Unchanged);
    }
    Ok(res)
}

/// Pauses or resumes the schedule `job` (404 when there is none): the one
/// path of the API's pause/resume and the dashboard's buttons. A resume
/// skips the ticks missed while paused and wakes the cron loop. With
/// whether it changed anything (false: it was so already).
pub(crate) async fn set_job_paused(
    state: &AppState,
    job: CronRef,
    paused: bool,
) -> Result<(CronRecord, bool), ApiError> {
    let job_id = job.job_id.clone();
    let old = state
        .store()
        .cron_get(&job)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(&job_id))?;
    if old.paused == paused {
        return Ok((old, false));
    }
    let now = state.clock.now();
    let next_run_at = match (&old.spec.cron_expr, old.next_run_at) {
        // Ticks missed while paused are skipped, not fired on resume.
        (Some(_), Some(_)) => input::parsed(&old.spec)?
            .next_after(now)
            .map_err(|e| ApiError::invalid(format!("cron_expr: {}", e.0)))?,
        // A one-shot keeps its time (past: it fires at once); an ended
        // schedule stays ended.
        (_, next) => next,
    };
    let record = state
        .store()
        .cron_pause(CronPause {
            job,
            paused,
            next_run_at,
            now,
        })
        .await
        .map_err(|e| ApiError::from_store(e, ""))?
        .ok_or_else(|| not_found(&job_id))?;
    if !paused {
        state.cron_wake.notify_one();
    }
    Ok((record, true))
}

/// `DELETE /v1/cron/delete/{job_id}`.
#[utoipa::path(
    delete,
    path = "/v1/cron/delete/{job_id}",
    operation_id = "cron_delete",
    tag = "cron",
    summary = "Delete a cron schedule",
    description = "The schedule and its runs are deleted; messages its runs published stay in their queue (a task schedule's own queue goes with it). POST to the same path does the same (operation cron_delete_post). 404 NOT_FOUND for an unknown job_id.",
    params(JobParam),
    responses(Ok<CronDeleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    JobPath(job_id): JobPath,
) -> Result<Reply<CronDeleted>, ApiError> {
    let job = found(&state, &caller, &job_id).await?;
    let deleted = state
        .store()
        .cron_delete(&job.job)
        .await
        .map_err(|e| ApiError::from_store(e, ""))?;
    if !deleted {
        return Err(not_found(&job_id));
    }
    if let CronTarget::Task(_) = job.spec.target {
        task::unprovision(&state, &caller.project, &job_id)
            .await
            .map_err(|e| ApiError::from_store(e, ""))?;
    }
    Ok(caller.reply(CronDeleted {
        job_id,
        deleted: true,
    }))
}

/// `POST /v1/cron/delete/{job_id}`: [`delete`] for clients that cannot
/// send `DELETE`.
#[utoipa::path(
    post,
    path = "/v1/cron/delete/{job_id}",
    operation_id = "cron_delete_post",
    tag = "cron",
    summary = "Delete a cron schedule (POST)",
    description = "The same as DELETE on this path, for clients that cannot send DELETE.",
    params(JobParam),
    responses(Ok<CronDeleted>, InvalidParams, Unauthorized, Refused, NotFound, StoreFailed)
)]
pub async fn delete_post(
    state: State<AppState>,
    caller: Caller,
    path: JobPath,
) -> Result<Reply<CronDeleted>, ApiError> {
    delete(state, caller, path).await
}

/// The `{job_id}` path segment.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // only its schema is used; `JobPath` reads the value
pub struct JobParam {
    /// The schedule's id, as `cron/create` answered it (`cron_` and 32
    /// hex digits).
    #[param(
        min_length = 1,
        max_length = 255,
        pattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]+$"
    )]
    job_id: String,
}

/// The `{job_id}` path segment, validated.
pub struct JobPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for JobPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(id) =
            axum::extract::Path::<String>::from_request_parts(parts, state)
                .await
                .map_err(|e| ApiError::invalid(format!("job_id (in the path): {e}")))?;
        validate::token("job_id", &id)?;
        Ok(JobPath(id))
    }
}
