//! The hostile tenant's setup, through the real mechanisms: its key made by
//! `onceq keys create --project hostile` on the queue database (as an
//! operator gives a tenant a key), then everything else through the HTTP
//! API with that key — webhooks at the tarpit for every event, many queues
//! (two of them named as the victim's), push subscriptions at the tarpit
//! with messages to deliver, every-second cron schedules (queue and task
//! ones), and a paused schedule and queue for the no-op calls.
//!
//! Every call carries an `Idempotency-Key` (a cron create its body's
//! `idempotency_key`) and is retried through the chaos until it is
//! answered, so a retried setup makes nothing twice.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::api::Api;
use super::{PROJECT, Sizes};

/// How long one setup call may be retried.
const CALL_WITHIN: Duration = Duration::from_secs(90);
/// Setup calls at once.
const SETUP_CONCURRENCY: usize = 8;

/// What the setup made.
#[derive(Debug, Clone, Default)]
pub struct Made {
    /// Queues created (the victim's two names included).
    pub queues: u64,
    /// Webhooks registered.
    pub webhooks: u64,
    /// Push subscriptions at the tarpit.
    pub subscriptions: u64,
    /// Messages published into the subscribed queues.
    pub published: u64,
    /// Every-second schedules created (queue and task ones).
    pub schedules: u64,
    /// Creates refused past the project's schedule cap (400).
    pub schedules_refused: u64,
    /// Queues the long polls wait on (empty, nobody publishes there).
    pub poll_queues: Vec<String>,
    /// A paused schedule: `cron/pause` on it changes nothing.
    pub paused_job: String,
    /// A paused queue: `queue/pause` on it changes nothing.
    pub paused_queue: String,
    /// How long the setup took.
    pub took: Duration,
}

/// The tenant's key: `onceq keys create --project hostile` on the store,
/// retried while PostgreSQL is down (a fault may be under way).
pub async fn make_key(onceq: &Path, database_url: &str) -> anyhow::Result<String> {
    let deadline = Instant::now() + CALL_WITHIN;
    loop {
        let out = tokio::process::Command::new(onceq)
            .args(["keys", "create", "--project", PROJECT])
            .args(["--label", "chaos: the hostile tenant"])
            .args(["--database-url", database_url])
            .env_remove("DATABASE_URL")
            .env_remove("ONCEQ_API_KEY")
            .env("NO_COLOR", "1")
            .output()
            .await?;
        let secret = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if out.status.success() && !secret.is_empty() {
            return Ok(secret);
        }
        anyhow::ensure!(
            Instant::now() < deadline,
            "onceq keys create --project {PROJECT} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Runs `calls` (path, body, key), [`SETUP_CONCURRENCY`] at a time;
/// returns each answer's status and body, in order.
async fn many(
    api: &Arc<Api>,
    calls: Vec<(String, serde_json::Value, String)>,
) -> anyhow::Result<Vec<(u16, serde_json::Value)>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(SETUP_CONCURRENCY));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (path, body, key)) in calls.into_iter().enumerate() {
        let (api, permits) = (api.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let a = api.until_answered(&path, Some(&body), &key, CALL_WITHIN).await?;
            anyhow::Ok((i, a.status, a.body))
        });
    }
    let mut out = Vec::new();
    while let Some(done) = tasks.join_next().await {
        out.push(done??);
    }
    out.sort_by_key(|(i, _, _)| *i);
    Ok(out.into_iter().map(|(_, s, b)| (s, b)).collect())
}

fn ok(answers: &[(u16, serde_json::Value)]) -> u64 {
    answers.iter().filter(|(s, _)| (200..300).contains(s)).count() as u64
}

/// Makes everything, `tarpit` being the hostile receiver's base URL.
pub async fn run(api: &Arc<Api>, sizes: &Sizes, tarpit: &str) -> anyhow::Result<Made> {
    let started = Instant::now();
    let mut made = Made::default();
    let post = |path: String, body: serde_json::Value, key: String| (path, body, key);

    // Webhooks first: every queue created after is an event for each.
    let hooks = (0..sizes.webhooks)
        .map(|i| {
            post(
                "/v1/account/webhooks/register".into(),
                json!({"url": format!("{tarpit}/hook/{i}"), "events": ["*"]}),
                format!("hostile-webhook-{i}"),
            )
        })
        .collect();
    made.webhooks = ok(&many(api, hooks).await?);

    // Its own queues, two named as the victim's: the names are per
    // project, so the victim's checks must see none of their messages.
    let mut names: Vec<String> = (0..sizes.queues).map(|i| format!("hostile-{i:05}")).collect();
    names.push(crate::QUEUE.into());
    names.push(crate::cron::QUEUE.into());
    names.push("hostile-paused".into());
    let creates = names
        .iter()
        .map(|n| {
            post(
                "/v1/queue/create".into(),
                json!({"name": n}),
                format!("hostile-create-{n}"),
            )
        })
        .collect();
    let answers = many(api, creates).await?;
    made.queues = answers
        .iter()
        .filter(|(s, b)| (200..300).contains(s) || b["error"]["code"] == "QUEUE_ALREADY_EXISTS")
        .count() as u64;

    // Push subscriptions at the tarpit, ten per queue (the most a queue
    // may have), each allowed 100 deliveries of 300 s at once.
    let push_queues: Vec<String> = names.iter().take(sizes.push_queues).cloned().collect();
    let mut subs = Vec::new();
    for q in &push_queues {
        for j in 0..10 {
            subs.push(post(
                format!("/v1/queue/push_subscribe/{q}"),
                json!({"url": format!("{tarpit}/push/{q}/{j}"), "max_in_flight": 100, "timeout_seconds": 300}),
                format!("hostile-sub-{q}-{j}"),
            ));
        }
    }
    made.subscriptions = ok(&many(api, subs).await?);
    let mut batches = Vec::new();
    for q in &push_queues {
        for b in 0..sizes.push_messages.div_ceil(10) {
            let messages: Vec<_> = (0..10).map(|m| json!({"payload": {"b": b, "m": m}})).collect();
            batches.push(post(
                "/v1/queue/publish_batch".into(),
                json!({"queue": q, "messages": messages}),
                format!("hostile-pub-{q}-{b}"),
            ));
        }
    }
    made.published = ok(&many(api, batches).await?) * 10;

    // Every-second schedules: into the subscribed queues and the tenant's
    // own `chaos-cron` (more deliveries at the tarpit, more publishes), and
    // a few task schedules delivered to the tarpit itself.
    let mut targets = push_queues.clone();
    targets.push(crate::cron::QUEUE.into());
    let mut crons: Vec<_> = (0..sizes.schedules)
        .map(|i| {
            post(
                "/v1/cron/create".into(),
                json!({"cron_expr": "* * * * * *", "queue": targets[i % targets.len()],
                       "payload": {"hostile": i}, "idempotency_key": format!("hostile-cron-{i}")}),
                format!("hostile-cron-{i}"),
            )
        })
        .collect();
    crons.extend((0..sizes.task_schedules).map(|i| {
        post(
            "/v1/cron/create".into(),
            json!({"cron_expr": "* * * * * *", "task": format!("{tarpit}/task/{i}"),
                   "timeout_seconds": 300, "idempotency_key": format!("hostile-task-{i}")}),
            format!("hostile-task-{i}"),
        )
    }));
    let answers = many(api, crons).await?;
    made.schedules = ok(&answers);
    made.schedules_refused = answers.iter().filter(|(s, _)| *s == 400).count() as u64;

    // What the no-op calls pause again and again.
    let paused = api
        .until_answered(
            "/v1/cron/create",
            Some(&json!({"cron_expr": "0 0 1 1 *", "queue": "hostile-paused",
                    "idempotency_key": "hostile-paused-job"})),
            "hostile-paused-job",
            CALL_WITHIN,
        )
        .await?;
    made.paused_job = paused.body["data"]["job_id"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the paused schedule's create answered {:?}", paused.body))?
        .to_owned();
    let path = format!("/v1/cron/pause/{}", made.paused_job);
    api.until_answered(&path, None, "hostile-pause-job", CALL_WITHIN)
        .await?;
    made.paused_queue = "hostile-paused".into();
    let path = format!("/v1/queue/pause/{}", made.paused_queue);
    api.until_answered(&path, None, "hostile-pause-queue", CALL_WITHIN)
        .await?;

    // The long polls wait on the queues nothing publishes into, the
    // tenant's `api-enqueue-jobs` among them.
    made.poll_queues = names
        .iter()
        .skip(sizes.push_queues)
        .filter(|n| *n != crate::cron::QUEUE && *n != "hostile-paused")
        .cloned()
        .collect();
    made.took = started.elapsed();
    Ok(made)
}
