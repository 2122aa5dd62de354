//! The hostile tenant's setup, through the real mechanisms: its key made by
//! `onceq keys create --project hostile` on the queue database (as an
//! operator gives a tenant a key), then everything else through the HTTP
//! API with that key, in parts that run side by side (a call caught by a
//! server kill waits out its claim, up to a minute, and holds up only its
//! own part): the long polls' queues (one named as the victim's), a paused
//! schedule and queue for the no-op calls, webhooks at the tarpit for every
//! event then many queues, push subscriptions at the tarpit with messages
//! to deliver, every-second cron schedules (queue and task ones; one
//! target named as the victim's).
//!
//! Every call is retried through the chaos until it is answered, without
//! an `Idempotency-Key` header: a keyed call whose server died (or whose
//! store went away) holds its key's claim for a minute, and its retries
//! get 409 until then, which would hold the tenant's setup past the run.
//! What must not be made twice says so in its body (cron creates' and
//! published messages' `idempotency_key`); a queue create or a pause is
//! the same whatever its repeats; a webhook or a subscription made twice
//! by a retry only brings its project to its cap sooner (20 webhooks, 10
//! subscriptions a queue), and what exists is counted from the database at
//! the end.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::api::Api;
use super::{PROJECT, Sizes};

/// How long a call the tenant's load needs (its key, its long polls'
/// queues, its paused schedule and queue) may be retried.
const CALL_WITHIN: Duration = Duration::from_secs(90);
/// How long any other setup call may be retried before it is given up
/// (a call held by a dead server's claim would wait a minute).
const MANY_WITHIN: Duration = Duration::from_secs(30);
/// Setup calls at once.
const SETUP_CONCURRENCY: usize = 8;

/// What the setup made: counted from the database at the end (see
/// [`super::Running::finish`]), but for the refusals and the time.
#[derive(Debug, Clone, Default)]
pub struct Made {
    /// Its queues (the dead-letter queues and cron tasks' queues made with
    /// them included).
    pub queues: u64,
    /// Webhooks registered.
    pub webhooks: u64,
    /// Push subscriptions at the tarpit.
    pub subscriptions: u64,
    /// Messages published into the subscribed queues.
    pub published: u64,
    /// Its schedules (the every-second ones, queue and task, and the
    /// paused one).
    pub schedules: u64,
    /// Creates refused past the project's schedule cap (400).
    pub schedules_refused: u64,
    /// Setup calls given up (no answer through the chaos within their
    /// window), and the last one's failure.
    pub given_up: (u64, String),
    /// Webhook events waiting for the tarpit at the end.
    pub events_pending: u64,
    /// How long the setup took, all its parts.
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

/// Runs `calls` (path, body, `Idempotency-Key` or none),
/// [`SETUP_CONCURRENCY`] at a time; returns each answer's status and body,
/// in order. A call the chaos kept from an answer for its whole window is
/// given up (status 0, its last failure in `error.message`), as a client
/// would: the tenant goes on with the rest.
async fn many(
    api: &Arc<Api>,
    calls: Vec<(String, serde_json::Value, Option<String>)>,
) -> anyhow::Result<Vec<(u16, serde_json::Value)>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(SETUP_CONCURRENCY));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (path, body, key)) in calls.into_iter().enumerate() {
        let (api, permits) = (api.clone(), permits.clone());
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await?;
            let answer = api
                .until_answered(&path, Some(&body), key.as_deref(), MANY_WITHIN)
                .await;
            anyhow::Ok(match answer {
                Ok(a) => (i, a.status, a.body),
                Err(e) => {
                    let mut g = api.given_up.lock().expect("given-up lock");
                    *g = (g.0 + 1, e.to_string());
                    (i, 0, json!({"error": {"message": e.to_string()}}))
                }
            })
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
    answers
        .iter()
        .filter(|(s, _)| (200..300).contains(s))
        .count() as u64
}

/// What the long polls wait on: queues nothing publishes into, the
/// tenant's own `api-enqueue-jobs` among them. Made first, so that the
/// polls start at once.
pub async fn poll_queues(api: &Arc<Api>) -> anyhow::Result<Vec<String>> {
    let mut names: Vec<String> = (0..POLL_QUEUES)
        .map(|i| format!("hostile-poll-{i}"))
        .collect();
    names.push(crate::QUEUE.into());
    let made = create_queues(api, &names).await?;
    anyhow::ensure!(
        made == names.len() as u64,
        "the long polls' queues were not all made"
    );
    Ok(names)
}

/// Queues the long polls spread over (besides `api-enqueue-jobs`).
pub const POLL_QUEUES: usize = 10;

/// Creates `names` (an existing queue of the same settings counts). No
/// `Idempotency-Key`: a create repeated with the same settings answers
/// the queue anyway, and a keyed call caught by a server kill would hold
/// its retries off for its claim's minute.
async fn create_queues(api: &Arc<Api>, names: &[String]) -> anyhow::Result<u64> {
    let creates = names
        .iter()
        .map(|n| ("/v1/queue/create".to_owned(), json!({"name": n}), None))
        .collect();
    let answers = many(api, creates).await?;
    Ok(answers
        .iter()
        .filter(|(s, b)| (200..300).contains(s) || b["error"]["code"] == "QUEUE_ALREADY_EXISTS")
        .count() as u64)
}

/// What the no-op calls pause again and again: a paused schedule and a
/// paused queue. Returns the schedule's id.
pub async fn paused(api: &Arc<Api>) -> anyhow::Result<String> {
    let queue = PAUSED_QUEUE.to_owned();
    create_queues(api, std::slice::from_ref(&queue)).await?;
    let job = api
        .until_answered(
            "/v1/cron/create",
            Some(&json!({"cron_expr": "0 0 1 1 *", "queue": queue,
                    "idempotency_key": "hostile-paused-job"})),
            None,
            CALL_WITHIN,
        )
        .await?;
    let id = job.body["data"]["job_id"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the paused schedule's create answered {:?}", job.body))?
        .to_owned();
    let path = format!("/v1/cron/pause/{id}");
    api.until_answered(&path, None, None, CALL_WITHIN).await?;
    let path = format!("/v1/queue/pause/{queue}");
    api.until_answered(&path, None, None, CALL_WITHIN).await?;
    Ok(id)
}

/// The queue the no-op `queue/pause` calls pause again.
pub const PAUSED_QUEUE: &str = "hostile-paused";

/// Webhooks at the tarpit for every event, then the many queues (each
/// creation an event for every webhook).
pub async fn webhooks_and_queues(
    api: &Arc<Api>,
    sizes: &Sizes,
    tarpit: &str,
) -> anyhow::Result<()> {
    let hooks = (0..sizes.webhooks)
        .map(|i| {
            (
                "/v1/account/webhooks/register".to_owned(),
                json!({"url": format!("{tarpit}/hook/{i}"), "events": ["*"]}),
                None,
            )
        })
        .collect();
    many(api, hooks).await?;
    let names: Vec<String> = (0..sizes.queues)
        .map(|i| format!("hostile-{i:05}"))
        .collect();
    create_queues(api, &names).await?;
    Ok(())
}

/// The push queues' names.
fn push_queues(sizes: &Sizes) -> Vec<String> {
    (0..sizes.push_queues)
        .map(|i| format!("hostile-push-{i}"))
        .collect()
}

/// Push queues with ten subscriptions each at the tarpit (the most a
/// queue may have), each allowed 100 deliveries of 300 s at once, and
/// messages to deliver; returns the messages published.
pub async fn push(api: &Arc<Api>, sizes: &Sizes, tarpit: &str) -> anyhow::Result<u64> {
    let queues = push_queues(sizes);
    create_queues(api, &queues).await?;
    let mut subs = Vec::new();
    for q in &queues {
        for j in 0..10 {
            subs.push((
                format!("/v1/queue/push_subscribe/{q}"),
                json!({"url": format!("{tarpit}/push/{q}/{j}"), "max_in_flight": 100, "timeout_seconds": 300}),
                None,
            ));
        }
    }
    many(api, subs).await?;
    let mut batches = Vec::new();
    for q in &queues {
        for b in 0..sizes.push_messages.div_ceil(10) {
            // Each message's own key: a retried batch stores nothing twice.
            let messages: Vec<_> = (0..10)
                .map(|m| json!({"payload": {"b": b, "m": m}, "idempotency_key": format!("{q}-{b}-{m}")}))
                .collect();
            batches.push((
                "/v1/queue/publish_batch".to_owned(),
                json!({"queue": q, "messages": messages}),
                None,
            ));
        }
    }
    Ok(ok(&many(api, batches).await?) * 10)
}

/// Every-second schedules into the push queues and the tenant's own
/// `chaos-cron` (named as the victim's; its first run creates it), and
/// task schedules delivered to the tarpit; returns the creates refused
/// past the project's cap.
pub async fn cron(api: &Arc<Api>, sizes: &Sizes, tarpit: &str) -> anyhow::Result<u64> {
    let mut targets = push_queues(sizes);
    targets.push(crate::cron::QUEUE.into());
    let mut crons: Vec<_> = (0..sizes.schedules)
        .map(|i| {
            (
                "/v1/cron/create".to_owned(),
                json!({"cron_expr": "* * * * * *", "queue": targets[i % targets.len()],
                       "payload": {"hostile": i}, "idempotency_key": format!("hostile-cron-{i}")}),
                None,
            )
        })
        .collect();
    crons.extend((0..sizes.task_schedules).map(|i| {
        (
            "/v1/cron/create".to_owned(),
            json!({"cron_expr": "* * * * * *", "task": format!("{tarpit}/task/{i}"),
                   "timeout_seconds": 300, "idempotency_key": format!("hostile-task-{i}")}),
            None,
        )
    }));
    let answers = many(api, crons).await?;
    Ok(answers.iter().filter(|(s, _)| *s == 400).count() as u64)
}
