//! The hostile project (alpha) of `all_at_once`, doing everything the
//! issue found could starve another tenant, at once: thousands of queues,
//! webhooks and push subscriptions (and cron tasks) at a receiver that
//! reads each request and never answers, hundreds of every-second
//! schedules, hundreds of parked long polls, and, for as long as it runs,
//! a stream of no-op keyed calls, dashboard reads of its overview and new
//! queues whose events pile up behind its hanging webhooks.
//!
//! It starts in that order (the schedules right after the queues), each part waiting until it holds what it
//! aims for, so the victim's loaded phase finds all of them in force: its
//! webhook attempts hold their per-project share of the slots before its
//! push deliveries take the rest of its outbound share.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use onceq_server::outbound::Kind;
use serde_json::json;
use tokio::task::JoinHandle;

use crate::{
    dashboard::Browser,
    harness::TestServer,
    push::{
        self, SECRET,
        receiver::{Answer, Receiver},
    },
};

/// Queues (sharing one dead-letter queue, as a tenant's many small queues
/// would: one create each).
pub const QUEUES: usize = 3000;
pub const WEBHOOKS: usize = 20;
/// Queues whose every subscription is at the tarpit…
pub const TARPIT_QUEUES: usize = 2;
/// …each with this many, at `max_in_flight` 10: 120 deliveries it would
/// hold open, more than its project's cap.
pub const TARPIT_SUBSCRIPTIONS: usize = 6;
/// Every-second task schedules at the tarpit.
pub const TASKS: usize = 5;
/// Every-second schedules into one of its queues.
pub const SCHEDULES: usize = 200;
pub const LONG_POLLS: usize = 500;
/// Long polls that must be waiting, on the median of the loaded phase's
/// samples: a poll whose 20 s ran out is polling again, and they all
/// parked at once, so for a moment many may be in between.
pub const LONG_POLLS_WAITING: usize = LONG_POLLS * 9 / 10;
/// Callers creating its queues at once.
const CREATORS: usize = 8;

/// How far the hostile project got, counted by its loops.
#[derive(Default)]
pub struct Counts {
    pub no_ops: AtomicUsize,
    pub no_ops_refused: AtomicUsize,
    pub dashboard_reads: AtomicUsize,
    pub churned_queues: AtomicUsize,
    /// Long polls waiting, sampled every 100 ms once all are set up.
    pub waiting: std::sync::Mutex<Vec<usize>>,
}

impl Counts {
    /// The median of the waiting long polls sampled.
    pub fn waiting_median(&self) -> usize {
        let mut v = self.waiting.lock().unwrap().clone();
        v.sort();
        v.get(v.len() / 2).copied().unwrap_or(0)
    }
}

pub struct Hostile {
    pub tarpit: Receiver,
    pub counts: Arc<Counts>,
    pub setup: Vec<(&'static str, Duration)>,
    tasks: Vec<JoinHandle<()>>,
}

impl Hostile {
    /// Sets the hostile project up on `s` and leaves its loops running.
    pub async fn start(s: &Arc<TestServer>) -> Self {
        let tarpit = Receiver::start([], Answer::Hang).await;
        let mut h = Self {
            tarpit,
            counts: Arc::default(),
            setup: Vec::new(),
            tasks: Vec::new(),
        };
        let started = Instant::now();
        create_queues(s, QUEUES).await;
        h.took("queues", started);

        let started = Instant::now();
        let every_second = json!({"queue": "h-ticks", "cron_expr": "* * * * * *", "payload": {}});
        s.post("/v1/queue/create", json!({"name": "h-ticks"}))
            .await
            .ok();
        for _ in 0..SCHEDULES {
            s.post("/v1/cron/create", every_second.clone()).await.ok();
        }
        h.took("schedules", started);

        let started = Instant::now();
        h.hanging_webhooks(s).await;
        h.took("webhooks", started);

        let started = Instant::now();
        h.tarpit_subscriptions(s).await;
        h.took("push subscriptions and tasks", started);

        let started = Instant::now();
        h.long_polls(s).await;
        h.took("long polls", started);

        h.no_op_keyed_calls(s).await;
        h.dashboard_reader(s);
        let (s, counts) = (s.clone(), h.counts.clone());
        h.tasks.push(tokio::spawn(async move {
            loop {
                let n = s.state.long_polls.waiting();
                counts.waiting.lock().unwrap().push(n);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }));
        h
    }

    fn took(&mut self, what: &'static str, started: Instant) {
        self.setup.push((what, started.elapsed()));
    }

    /// Webhooks at the tarpit for `queue.created`, and new queues (one
    /// every 20 ms, for as long as the project runs) to keep their
    /// deliveries coming; returns once its share of attempts hang.
    async fn hanging_webhooks(&mut self, s: &Arc<TestServer>) {
        for _ in 0..WEBHOOKS {
            s.post(
                "/v1/account/webhooks/register",
                json!({"url": self.tarpit.url("/hook"), "events": ["queue.created"], "secret": SECRET}),
            )
            .await
            .ok();
        }
        // The dispatcher learns of new webhooks on its timer.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (s2, counts) = (s.clone(), self.counts.clone());
        self.tasks.push(tokio::spawn(async move {
            for n in 0.. {
                let name = format!("churn-{n:05}");
                s2.post("/v1/queue/create", json!({"name": name}))
                    .await
                    .ok();
                counts.churned_queues.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
        let share = s.state.outbound.limits.config().webhook_max_per_project;
        settle(|| self.tarpit.seen_at("/hook") >= share).await;
    }

    /// Push subscriptions and task schedules at the tarpit, with messages
    /// enough for every delivery slot they have; returns once the project
    /// holds its whole outbound share.
    async fn tarpit_subscriptions(&mut self, s: &Arc<TestServer>) {
        let url = self.tarpit.url("/tarpit");
        for q in 0..TARPIT_QUEUES {
            let queue = format!("tarpit-{q}");
            s.post("/v1/queue/create", json!({"name": queue}))
                .await
                .ok();
            for _ in 0..TARPIT_SUBSCRIPTIONS {
                let extra = json!({"max_in_flight": 10, "timeout_seconds": 300});
                push::subscribe(s, &queue, &url, extra).await;
            }
            let messages: Vec<_> = (0..100).map(|n| json!({"payload": {"n": n}})).collect();
            for chunk in messages.chunks(10) {
                s.publish_batch(&queue, chunk).await;
            }
        }
        for _ in 0..TASKS {
            let task = json!({"task": self.tarpit.url("/task"), "cron_expr": "* * * * * *", "payload": {}});
            s.post("/v1/cron/create", task).await.ok();
        }
        // Its share: the project's cap, or all of the process's if that is
        // smaller (with the per-project cap set past it).
        let caps = s.state.outbound.limits.config();
        let cap = caps.max_per_project.min(caps.max_in_flight);
        let limits = &s.state.outbound.limits;
        settle(|| limits.project_busy("alpha") >= cap).await;
    }

    /// [`LONG_POLLS`] consumers waiting on an empty queue, each polling
    /// again as soon as it is answered; returns once all wait.
    async fn long_polls(&mut self, s: &Arc<TestServer>) {
        s.post("/v1/queue/create", json!({"name": "h-idle"}))
            .await
            .ok();
        for _ in 0..LONG_POLLS {
            let s = s.clone();
            self.tasks.push(tokio::spawn(async move {
                loop {
                    let body = json!({"queue": "h-idle", "wait_seconds": 20});
                    let _ = s
                        .http
                        .post(s.url("/v1/queue/consume"))
                        .bearer_auth(&s.key)
                        .json(&body)
                        .send()
                        .await;
                }
            }));
        }
        let polls = &s.state.long_polls;
        until(|| polls.waiting() >= LONG_POLLS, "every long poll waits").await;
    }

    /// `cron/pause` of a paused schedule, each with a new
    /// `Idempotency-Key`, back to back (the ledger amplification).
    async fn no_op_keyed_calls(&mut self, s: &Arc<TestServer>) {
        let job = crate::cron::create(
            s,
            json!({"queue": "h-ticks", "cron_expr": "0 3 * * *", "payload": {"blob": "x".repeat(100_000)}}),
        )
        .await;
        let pause = format!("/v1/cron/pause/{}", job["job_id"].as_str().unwrap());
        s.post(&pause, json!({})).await.ok();
        let (s, counts) = (s.clone(), self.counts.clone());
        self.tasks.push(tokio::spawn(async move {
            for n in 0.. {
                let key = format!("noop-{n}");
                let r = s
                    .send_with(
                        reqwest::Method::POST,
                        &pause,
                        None,
                        &[("idempotency-key", &key)],
                    )
                    .await;
                match r.status {
                    200 => counts.no_ops.fetch_add(1, Ordering::Relaxed),
                    429 => counts.no_ops_refused.fetch_add(1, Ordering::Relaxed),
                    _ => panic!("a no-op pause answered {}: {:?}", r.status, r.body),
                };
            }
        }));
    }

    /// A tab on the overview of its thousands of queues, reloading back to
    /// back (the 31 MB page).
    fn dashboard_reader(&mut self, s: &Arc<TestServer>) {
        let (s, counts) = (s.clone(), self.counts.clone());
        self.tasks.push(tokio::spawn(async move {
            let tab = Browser::signed_in(&s, &s.key);
            loop {
                let page = tab.get("/dashboard").await;
                assert_eq!(page.status, reqwest::StatusCode::OK);
                counts.dashboard_reads.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }

    /// What it holds now, for the report: deliveries open by kind.
    pub fn in_flight(&self, s: &TestServer, kind: Kind) -> i64 {
        let mut all = s.state.outbound.limits.in_flight();
        all.find(|(k, _)| *k == kind).unwrap().1
    }

    /// Ends its loops and long polls.
    pub fn stop(self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// Creates `n` queues of alpha (`many-00000`, …), all dead-lettering
/// into `many-dlq`: what `n` `queue/create` calls would store, less their
/// HTTP (the test is about what the queues cost once there; through the
/// API their creation took 20 s of a loaded machine). On SQLite through
/// the server's store, [`CREATORS`] at a time; on PostgreSQL, whose
/// `queue_create` is six round trips, in one `INSERT` of the same row.
async fn create_queues(s: &Arc<TestServer>, n: usize) {
    s.post("/v1/queue/create", json!({"name": "many-dlq"}))
        .await
        .ok();
    if let Some(url) = s.database_url() {
        return insert_queues(url, n).await;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let creators: Vec<_> = (0..CREATORS)
        .map(|_| {
            let (s, next) = (s.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    let create = onceq_store::QueueCreate {
                        queue: onceq_store::QueueRef::new("alpha", format!("many-{i:05}")),
                        settings: onceq_types::queue::QueueSettings {
                            dead_letter_queue: Some("many-dlq".into()),
                            ..Default::default()
                        },
                        now: s.clock.now(),
                    };
                    s.state.store().queue_create(create).await.unwrap();
                }
            })
        })
        .collect();
    for c in creators {
        c.await.unwrap();
    }
}

/// [`create_queues`] on PostgreSQL: the row `queue_insert.sql` writes for
/// a queue with the default settings and `many-dlq` as its DLQ.
async fn insert_queues(url: &str, n: usize) {
    let db = crate::harness::sql_client(url).await;
    let inserted = db
        .execute(
            "INSERT INTO onceq_queues (project, name, queue_type, dead_letter_queue_id, max_retries,
                                       message_retention_days, visibility_timeout_default,
                                       enable_priority, created_at, completed_retention_seconds)
             SELECT 'alpha', 'many-' || lpad(i::text, 5, '0'), 'standard', dlq.id, 3, 7, 30, true, now(), 0
             FROM generate_series(0, $1::int - 1) AS i,
                  (SELECT id FROM onceq_queues WHERE project = 'alpha' AND name = 'many-dlq') AS dlq",
            &[&(n as i32)],
        )
        .await
        .unwrap();
    assert_eq!(inserted, n as u64);
}

/// Polls `done` every 20 ms, 30 s at most, and goes on either way: what
/// the hostile holds is checked after the loaded phase, and a run with a
/// cap lifted (to see the victim's bound fail) gets there, with figures.
async fn settle(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `done` every 20 ms, 60 s at most.
async fn until(done: impl Fn() -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never got there: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
