//! The export handler under test, its remote control, and the shared
//! end-of-test check.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use onceq::{
    PublishOptions,
    worker::{Backoff, Handler, Job, Worker, WorkerConfig},
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::harness::Env;

/// The queue every worker test uses.
pub const QUEUE: &str = "exports";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Stops one run of the handler inside its transaction until released.
#[derive(Default)]
pub struct Gate {
    /// Notified when the handler reached the gate (its export row written,
    /// not committed).
    pub entered: Notify,
    /// Notify to let it go on.
    pub release: Notify,
}

/// What the test tells the handler to do, per job fact.
#[derive(Default)]
pub struct Control {
    failing: Mutex<HashSet<String>>,
    gates: Mutex<HashMap<String, Arc<Gate>>>,
}

impl Control {
    /// The handler fails for `fact` (after writing its row: the rollback
    /// must remove it) until [`heal`](Self::heal).
    pub fn fail(&self, fact: &str) {
        self.failing.lock().unwrap().insert(fact.into());
    }

    /// The handler works for `fact` again.
    pub fn heal(&self, fact: &str) {
        self.failing.lock().unwrap().remove(fact);
    }

    /// The next run for `fact` (only that one) stops at a gate.
    pub fn gate(&self, fact: &str) -> Arc<Gate> {
        let gate = Arc::new(Gate::default());
        self.gates.lock().unwrap().insert(fact.into(), gate.clone());
        gate
    }
}

/// Builds an export: one `exports` row per run, through the transaction.
pub struct Exports(pub Arc<Control>);

#[async_trait::async_trait]
impl Handler for Exports {
    async fn handle(
        &self,
        job: &Job,
        tx: &tokio_postgres::Transaction<'_>,
    ) -> Result<(), BoxError> {
        let tenant = job.payload.get("tenant").and_then(Value::as_str);
        let format = job.payload.get("format").and_then(Value::as_str);
        tx.execute(
            "INSERT INTO exports (job_fact, tenant, format) VALUES ($1, $2, $3)",
            &[&job.fact, &tenant, &format],
        )
        .await?;
        let gate = self.0.gates.lock().unwrap().remove(&job.fact);
        if let Some(gate) = gate {
            gate.entered.notify_one();
            gate.release.notified().await;
        }
        if self.0.failing.lock().unwrap().contains(&job.fact) {
            return Err(format!("export {} failed", job.fact).into());
        }
        // Sent with the ack; kept where the queue retains completed jobs.
        job.set_result(&serde_json::json!({"exported": job.fact}))?;
        Ok(())
    }
}

/// A test environment with the `exports` table.
pub async fn env() -> (Env, Arc<Control>) {
    let env = Env::start().await;
    env.pool
        .get()
        .await
        .unwrap()
        .batch_execute(
            "CREATE TABLE exports (
                id bigserial PRIMARY KEY,
                job_fact text NOT NULL,
                tenant text,
                format text,
                built_at timestamptz NOT NULL DEFAULT now()
            )",
        )
        .await
        .unwrap();
    (env, Arc::new(Control::default()))
}

/// Test defaults: the env's clock, no heartbeat (an hour), nacks without
/// delay, quick poll backoff, 1 s long polls.
pub fn config(env: &Env) -> WorkerConfig {
    WorkerConfig {
        clock: env.clock.clone(),
        heartbeat: Duration::from_secs(3600),
        retry: Backoff::none(),
        poll_backoff: Backoff {
            base: Duration::from_millis(20),
            max: Duration::from_millis(80),
        },
        wait_seconds: 1,
        shutdown_grace: Duration::from_secs(10),
        ..WorkerConfig::new(QUEUE)
    }
}

/// A worker (a "process") with the test defaults, changed by `tweak`.
pub async fn worker(
    env: &Env,
    ctl: &Arc<Control>,
    tweak: impl FnOnce(&mut WorkerConfig),
) -> Worker {
    let mut config = config(env);
    tweak(&mut config);
    Worker::new(env.client(), env.pool.clone(), config, Exports(ctl.clone()))
        .await
        .unwrap()
}

/// Publishes an export job; `fact` goes in `payload.job_fact`.
pub async fn publish(env: &Env, fact: Option<&str>, key: &str) -> String {
    let mut payload = json!({"tenant": "acme", "format": "csv"});
    if let Some(fact) = fact {
        payload["job_fact"] = json!(fact);
    }
    let opts = PublishOptions {
        idempotency_key: Some(key.into()),
        ..Default::default()
    };
    env.client()
        .publish(QUEUE, &payload, opts)
        .await
        .unwrap()
        .message
        .message_id
}

/// Rows in `exports` for `fact`.
pub async fn exports(env: &Env, fact: &str) -> i64 {
    let db = env.pool.get().await.unwrap();
    db.query_one("SELECT count(*) FROM exports WHERE job_fact = $1", &[&fact])
        .await
        .unwrap()
        .get(0)
}

/// The fact's `(state, attempts)`, if it has a row.
pub async fn fact_row(env: &Env, fact: &str) -> Option<(String, i32)> {
    let db = env.pool.get().await.unwrap();
    db.query_opt(
        "SELECT state, attempts FROM onceq_job_facts WHERE fact = $1",
        &[&fact],
    )
    .await
    .unwrap()
    .map(|r| (r.get(0), r.get(1)))
}

/// When the fact's lease ends (`locked_until`).
pub async fn fact_lease_end(env: &Env, fact: &str) -> jiff::Timestamp {
    let db = env.pool.get().await.unwrap();
    db.query_one(
        "SELECT locked_until FROM onceq_job_facts WHERE fact = $1",
        &[&fact],
    )
    .await
    .unwrap()
    .get(0)
}

/// The queue's stats.
pub async fn stats(env: &Env) -> onceq::types::QueueStats {
    env.client().stats(QUEUE).await.unwrap()
}

/// The check every test ends with: for each published job exactly one
/// export, no other export, and nothing left on the queue.
pub async fn assert_each_job_done_once(env: &Env, facts: &[&str]) {
    for fact in facts {
        assert_eq!(exports(env, fact).await, 1, "exports of {fact}");
    }
    let total = env.count("SELECT count(*) FROM exports").await;
    assert_eq!(
        total,
        facts.len() as i64,
        "no export outside the published jobs"
    );
    let s = stats(env).await;
    assert_eq!(s.message_count, 0, "queue left with {s:?}");
}

/// Waits (polling, bounded) until `cond` holds: for state another task
/// changes, never to let time pass — time is the manual clock.
pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let wait = async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .is_err()
    {
        panic!("timed out waiting for {what}");
    }
}

/// Waits for a gate's handler to arrive (bounded).
pub async fn entered(gate: &Gate) {
    tokio::time::timeout(Duration::from_secs(10), gate.entered.notified())
        .await
        .expect("the handler never reached its gate");
}

/// Waits (polling, bounded) until a heartbeat since the clock last moved
/// pushed every job's leases: each message's lease ends at least 29 s from
/// now (the worker asks for 30) and each fact's at least 59 s (it pushes
/// 60). A beat that began before the clock moved cannot pass this, nor one
/// whose extend failed; counting beats could (one job's beats can make up
/// another's, and a failed beat counted as one before `heartbeat_misses`).
pub async fn leases_pushed(env: &Env, message_ids: &[String], facts: &[&str]) {
    let client = env.client();
    let pushed = async {
        loop {
            let now = env.clock.now();
            let mut all = true;
            for id in message_ids {
                let m = client.get_message(QUEUE, id).await.unwrap();
                all &= m
                    .lease_expires_at
                    .is_some_and(|end| end >= now + jiff::SignedDuration::from_secs(29));
            }
            for fact in facts {
                all &= fact_lease_end(env, fact).await >= now + jiff::SignedDuration::from_secs(59);
            }
            if all {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), pushed)
        .await
        .is_err()
    {
        panic!("timed out waiting for every job's leases to be pushed");
    }
}
