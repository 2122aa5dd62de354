//! The conformance suite: every behaviour of the `Store` trait, written once
//! and run against both backends so they never drift.
//!
//! A test is an `async fn name(h: Harness)`. `conformance!(name)` expands to a
//! module `name` holding `#[tokio::test] async fn sqlite()`,
//! `async fn postgres()` and `async fn pgbouncer()` (PostgreSQL through
//! PgBouncer in transaction mode), each handing the test a fresh, empty
//! store;
//! `conformance!(multi_thread name)` does the same on a multi-thread runtime
//! for tests where concurrency matters.
//!
//! Time is the harness's `now`, which a test moves forward with
//! [`Harness::advance`]. Nothing sleeps and nothing reads the wall clock.
//!
//! - [`queues`]: create (defaults, conflicts, DLQs), get, list, delete, purge.
//! - [`update`]: `queue_update`: changes, the create rules, refusals.
//! - [`publish`]: implicit queue creation, outcomes, all-or-nothing batches.
//! - [`dedupe`]: idempotency keys: replays, conflicts, scope, window, purge.
//! - [`claim`]: order, priority, `max`, leases, delayed messages.
//! - [`ack_nack`]: ack and nack, with and without receipts.
//! - [`batch`]: the batch forms of ack, nack, cancel, delete and redrive,
//!   answered entry by entry.
//! - [`limits`]: `max_in_flight` and `rate_per_sec`: claims take fewer.
//! - [`lease`]: extend, lease expiry, stale receipts.
//! - [`dlq`]: the dead-letter rule and redrive.
//! - [`backoff`]: a queue's retry backoff: stored, and applied to nacks
//!   without a delay and to expired leases.
//! - [`stats`]: counts by state, oldest message age.
//! - [`depths`]: every queue's depth at once (`/metrics`), pool use.
//! - [`browse`]: message pages, search, one message, delete and redrive of one.
//! - [`find`]: one message in its queue or its dead-letter queue.
//! - [`attempts`]: each ended hand-out recorded (nack, lease expiry, push
//!   failure, dead-lettering), bounded, kept by dead letters and redrives.
//! - [`finished`]: finished messages kept by `completed_retention_seconds`
//!   (completed, cancelled), `message_cancel`, their purge.
//! - [`finished_list`]: the kept finished messages, newest first, paged.
//! - [`maintenance`]: retention purge.
//! - [`pause`]: `queue_pause`: nothing handed out while paused, publishes
//!   and leases already out go on; the record, stats, depths and the push
//!   scan say so.
//! - [`keys`]: API key storage.
//! - [`ledger`]: the call ledger: the shared case table (claim, replay,
//!   mismatch, in flight, takeover, scope, window, purge, races).
//! - [`accounts`]: key scopes and rate overrides, credit limits, usage,
//!   server heartbeats.
//! - [`tenancy`]: two projects owning the same queue name.
//! - [`concurrency`]: racing publishers and claimers, two Postgres "servers".
//! - [`subscriptions`]: push subscriptions: add, list, delete, limits,
//!   tenancy, and the dispatcher's scan.
//! - [`cron`]: cron schedules: storage, create's dedupe, the due scan,
//!   one run per tick however many firings race.
//! - [`webhooks`]: account webhooks: records, the event outbox (claims
//!   across servers, retries, removal) and the bounded attempts.
//! - [`headers`]: message headers kept on every path a message takes.
//! - [`hand_out`]: a publish's message handed straight to a waiting
//!   consumer, where a claim would hand it out at once; handed back.
//! - [`fifo`]: FIFO queues: order and one in flight per group, alone and
//!   under concurrent claimers (and two Postgres "servers").
//! - [`readiness`]: `ping` says not-ready when the store cannot write (a
//!   full SQLite disk, a read-only PostgreSQL).
//!
//! Over 400 lines: the harness and the conformance tests that need no module
//! of their own; topics with many tests have one (`fifo`, `browse`, …).

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use onceq_store::{
    ClaimedMessage, ExtendOutcome, KeyInsert, LeaseExpiry, LeaseRef, MessageAck, MessageClaim,
    MessageExtend, MessageNack, MessagePublish, NackOutcome, NewMessage, PublishOutcome,
    QueueCreate, QueueCreated, QueueRef, Store,
};
use onceq_types::{QueueRecord, QueueStats, queue::QueueSettings};

/// Runs each named test against both backends (see the crate docs).
macro_rules! conformance {
    (multi_thread $($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn sqlite() {
                super::$name(crate::Harness::sqlite().await).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn postgres() {
                super::$name(crate::Harness::postgres().await).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn pgbouncer() {
                super::$name(crate::Harness::pgbouncer().await).await
            }
        }
    )+};
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(crate::Harness::sqlite().await).await
            }
            #[tokio::test]
            async fn postgres() {
                super::$name(crate::Harness::postgres().await).await
            }
            #[tokio::test]
            async fn pgbouncer() {
                super::$name(crate::Harness::pgbouncer().await).await
            }
        }
    )+};
}

mod accounts;
mod ack_nack;
mod attempts;
mod backoff;
mod batch;
mod browse;
mod claim;
mod concurrency;
mod cron;
mod dedupe;
mod depths;
mod dlq;
mod fifo;
mod find;
mod finished;
mod finished_list;
mod hand_out;
mod headers;
mod keys;
mod lease;
mod ledger;
mod ledger_driver;
mod ledger_usage;
mod limits;
mod maintenance;
mod pause;
mod publish;
mod queue_delete_races;
mod queues;
mod readiness;
mod stats;
mod subscriptions;
mod tenancy;
mod triage;
mod update;
mod webhooks;

/// The project a harness acts as unless told otherwise.
pub const PROJECT: &str = "proj-a";

/// Whatever keeps a store's data alive: the SQLite directory, or the
/// Postgres test database. Dropped with the last harness of a test.
struct Backing {
    dir: Option<tempfile::TempDir>,
    db: Option<onceq_testdb::TestDatabase>,
}

/// A fresh store, the project the test acts as, and the test's clock.
pub struct Harness {
    /// The store under test.
    pub store: Arc<dyn Store>,
    /// The time every call is made at; moved only by the test.
    pub now: Timestamp,
    /// Where the clock started.
    pub t0: Timestamp,
    /// The project every helper acts in.
    pub project: String,
    /// The dedupe window publishes pass (default 24 h, as the server's).
    pub dedupe_window: SignedDuration,
    backing: Arc<Backing>,
}

/// A fresh, empty, migrated Postgres database: a copy of a template
/// migrated once per test process.
async fn migrated_database() -> onceq_testdb::TestDatabase {
    onceq_testdb::database_from_template("onceq", |url| async move {
        onceq_store::postgres::PgStore::migrate(&url)
            .await
            .expect("migrate the template");
    })
    .await
}

impl Harness {
    /// A fresh embedded store in a temporary directory.
    pub async fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = onceq_store::sqlite::SqliteStore::open(dir.path())
            .await
            .expect("open sqlite store");
        let backing = Backing {
            dir: Some(dir),
            db: None,
        };
        Self::new(Arc::new(store), backing).await
    }

    /// A fresh, empty, migrated Postgres database: a copy of a template
    /// migrated once per test process.
    pub async fn postgres() -> Self {
        let db = migrated_database().await;
        let store = onceq_store::postgres::PgStore::connect(&db.url)
            .await
            .expect("connect postgres store");
        let backing = Backing {
            dir: None,
            db: Some(db),
        };
        Self::new(Arc::new(store), backing).await
    }

    /// [`postgres`](Self::postgres)'s database, the store reaching it
    /// through PgBouncer in transaction mode (`pgbouncer=transaction`:
    /// statements unnamed, the hot ones as functions). Its
    /// [`postgres_url`](Self::postgres_url) is the direct one.
    pub async fn pgbouncer() -> Self {
        let db = migrated_database().await;
        let bouncer = onceq_testdb::shared_pgbouncer().await;
        let url = format!("{}?pgbouncer=transaction", bouncer.url_of(&db.name));
        // Generous: connecting learns every statement through the pooler,
        // on a machine the whole suite shares.
        let options = onceq_store::StoreOptions {
            op_timeout: std::time::Duration::from_secs(30),
            ..Default::default()
        };
        let store = onceq_store::postgres::PgStore::connect_with(&url, options)
            .await
            .unwrap_or_else(|e| panic!("connect through pgbouncer: {e}\n{}", bouncer.log()));
        let backing = Backing {
            dir: None,
            db: Some(db),
        };
        Self::new(Arc::new(store), backing).await
    }

    async fn new(store: Arc<dyn Store>, backing: Backing) -> Self {
        let t0: Timestamp = "2030-01-01T00:00:00Z".parse().unwrap();
        let h = Self {
            store,
            now: t0,
            t0,
            project: PROJECT.to_owned(),
            dedupe_window: SignedDuration::from_hours(24),
            backing: Arc::new(backing),
        };
        h.ensure_project(PROJECT).await;
        h
    }

    /// The Postgres URL of this test's database (None on SQLite).
    pub fn postgres_url(&self) -> Option<&str> {
        self.backing.db.as_ref().map(|db| db.url.as_str())
    }

    /// The SQLite store's directory (None on Postgres).
    pub fn sqlite_dir(&self) -> Option<&std::path::Path> {
        self.backing.dir.as_ref().map(|d| d.path())
    }

    /// The same store and clock, acting as another project.
    pub async fn as_project(&self, project: &str) -> Self {
        self.ensure_project(project).await;
        Self {
            store: self.store.clone(),
            now: self.now,
            t0: self.t0,
            project: project.to_owned(),
            dedupe_window: self.dedupe_window,
            backing: self.backing.clone(),
        }
    }

    /// Projects exist because a key names them (as on a real server, where
    /// every call is authenticated); give the project one.
    async fn ensure_project(&self, project: &str) {
        self.store
            .key_insert(KeyInsert {
                project: project.to_owned(),
                key_id: format!("harness-{project}"),
                key_hash: onceq_store::ids::payload_hash(&format!("harness-{project}")).to_vec(),
                label: Some("conformance harness".to_owned()),
                scope: Default::default(),
                expires_at: None,
                now: self.now,
            })
            .await
            .expect("key_insert for the harness project");
    }

    /// Moves the clock forward.
    pub fn advance(&mut self, secs: i64) {
        self.now += SignedDuration::from_secs(secs);
    }

    /// `t0` plus `secs`.
    pub fn t(&self, secs: i64) -> Timestamp {
        self.t0 + SignedDuration::from_secs(secs)
    }

    /// The queue `name` in this harness's project.
    pub fn q(&self, name: &str) -> QueueRef {
        QueueRef::new(self.project.clone(), name)
    }

    fn lease(&self, queue: &str, id: &str, receipt: Option<&str>) -> LeaseRef {
        LeaseRef {
            queue: self.q(queue),
            message_id: id.to_owned(),
            receipt: receipt.map(str::to_owned),
        }
    }

    // ------------------------------------------------------------ queues

    pub async fn create(
        &self,
        name: &str,
        settings: QueueSettings,
    ) -> onceq_store::Result<QueueCreated> {
        let p = QueueCreate {
            queue: self.q(name),
            settings,
            now: self.now,
        };
        self.store.queue_create(p).await
    }

    pub async fn get(&self, name: &str) -> Option<QueueRecord> {
        self.store
            .queue_get(&self.q(name))
            .await
            .expect("queue_get")
    }

    pub async fn try_stats(&self, name: &str) -> onceq_store::Result<QueueStats> {
        self.store.queue_stats(&self.q(name), self.now).await
    }

    pub async fn stats(&self, name: &str) -> QueueStats {
        self.try_stats(name).await.expect("queue_stats")
    }

    // ------------------------------------------------------------ messages

    pub async fn publish(
        &self,
        queue: &str,
        messages: Vec<NewMessage>,
    ) -> onceq_store::Result<Vec<PublishOutcome>> {
        let p = MessagePublish {
            queue: self.q(queue),
            messages,
            dedupe_window: self.dedupe_window,
            new_queue_completed_retention: 0,
            now: self.now,
        };
        self.store.message_publish(p).await
    }

    /// Publishes one message and returns its outcome.
    pub async fn publish_msg(&self, queue: &str, m: NewMessage) -> PublishOutcome {
        let mut out = self.publish(queue, vec![m]).await.expect("publish");
        assert_eq!(out.len(), 1);
        out.remove(0)
    }

    /// Publishes one plain message with this payload.
    pub async fn publish_one(&self, queue: &str, payload: &str) -> PublishOutcome {
        self.publish_msg(queue, msg(payload)).await
    }

    pub async fn try_claim(
        &self,
        queue: &str,
        max: u32,
        vt_secs: Option<i64>,
    ) -> onceq_store::Result<Vec<ClaimedMessage>> {
        let p = MessageClaim {
            queue: self.q(queue),
            max,
            visibility_timeout: vt_secs.map(SignedDuration::from_secs),
            now: self.now,
        };
        self.store.message_claim(p).await
    }

    /// Claims up to `max` with the queue's default lease.
    pub async fn claim(&self, queue: &str, max: u32) -> Vec<ClaimedMessage> {
        self.try_claim(queue, max, None).await.expect("claim")
    }

    /// Claims and expects exactly one message.
    pub async fn claim_one(&self, queue: &str) -> ClaimedMessage {
        let mut got = self.claim(queue, 1).await;
        assert_eq!(got.len(), 1, "expected one message from {queue}");
        got.remove(0)
    }

    pub async fn ack(&self, queue: &str, id: &str, receipt: Option<&str>) -> bool {
        self.ack_with(queue, id, receipt, None).await.acked
    }

    /// Acks with a `result`, answering the whole outcome.
    pub async fn ack_with(
        &self,
        queue: &str,
        id: &str,
        receipt: Option<&str>,
        result: Option<&str>,
    ) -> onceq_store::AckOutcome {
        let p = MessageAck {
            lease: self.lease(queue, id, receipt),
            result: result.map(str::to_owned),
            now: self.now,
        };
        self.store.message_ack(p).await.expect("ack")
    }

    pub async fn nack(
        &self,
        queue: &str,
        id: &str,
        receipt: Option<&str>,
        requeue: bool,
        delay_secs: i64,
    ) -> NackOutcome {
        let p = MessageNack {
            lease: self.lease(queue, id, receipt),
            requeue,
            delay: SignedDuration::from_secs(delay_secs),
            by_backoff: false,
            error: None,
            by: onceq_store::NackBy::Consumer,
            now: self.now,
        };
        self.store.message_nack(p).await.expect("nack")
    }

    /// Nacks a claimed message (requeue now, or dead-letter) with `error`,
    /// as `by` would.
    pub async fn nack_failed(
        &self,
        queue: &str,
        c: &ClaimedMessage,
        requeue: bool,
        error: Option<&str>,
        by: onceq_store::NackBy,
    ) -> NackOutcome {
        let p = MessageNack {
            lease: self.lease(queue, &c.message_id, Some(&c.receipt)),
            requeue,
            delay: SignedDuration::ZERO,
            error: error.map(str::to_owned),
            by,
            by_backoff: false,
            now: self.now,
        };
        self.store.message_nack(p).await.expect("nack")
    }

    /// Nacks a claimed message with its receipt: requeue now, or dead-letter.
    pub async fn nack_claimed(
        &self,
        queue: &str,
        c: &ClaimedMessage,
        requeue: bool,
    ) -> NackOutcome {
        self.nack(queue, &c.message_id, Some(&c.receipt), requeue, 0)
            .await
    }

    pub async fn extend(
        &self,
        queue: &str,
        id: &str,
        receipt: Option<&str>,
        vt_secs: i64,
    ) -> ExtendOutcome {
        let p = MessageExtend {
            lease: self.lease(queue, id, receipt),
            visibility_timeout: SignedDuration::from_secs(vt_secs),
            now: self.now,
        };
        self.store.message_extend(p).await.expect("extend")
    }

    pub async fn lease_expire(&self, limit: u32) -> LeaseExpiry {
        self.store
            .lease_expire(self.now, limit)
            .await
            .expect("lease_expire")
    }
}

/// A message available now, priority 0, no key.
pub fn msg(payload: &str) -> NewMessage {
    NewMessage {
        payload: payload.to_owned(),
        delay: SignedDuration::ZERO,
        priority: 0,
        idempotency_key: None,
        group_id: None,
        headers: None,
        hand_out: None,
    }
}

/// A small canonical payload: `{"n":<n>}`.
pub fn payload(n: i64) -> String {
    format!(r#"{{"n":{n}}}"#)
}

/// Builder-style tweaks of a [`NewMessage`].
pub trait MsgExt {
    fn key(self, key: &str) -> Self;
    fn delay(self, secs: i64) -> Self;
    fn priority(self, priority: i32) -> Self;
    fn group(self, group: &str) -> Self;
}

impl MsgExt for NewMessage {
    fn key(mut self, key: &str) -> Self {
        self.idempotency_key = Some(key.to_owned());
        self
    }
    fn delay(mut self, secs: i64) -> Self {
        self.delay = SignedDuration::from_secs(secs);
        self
    }
    fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
    fn group(mut self, group: &str) -> Self {
        self.group_id = Some(group.to_owned());
        self
    }
}

/// The settings of a queue created by its first publish.
pub fn defaults() -> QueueSettings {
    QueueSettings::default()
}

/// The default settings with an explicit dead-letter queue.
pub fn with_dlq(dlq: &str) -> QueueSettings {
    QueueSettings {
        dead_letter_queue: Some(dlq.to_owned()),
        ..QueueSettings::default()
    }
}

/// The default settings of a FIFO queue.
pub fn fifo() -> QueueSettings {
    QueueSettings {
        queue_type: onceq_types::QueueType::Fifo,
        ..QueueSettings::default()
    }
}

/// The message ids of a claim, in the order handed out.
pub fn ids(claimed: &[ClaimedMessage]) -> Vec<String> {
    claimed.iter().map(|c| c.message_id.clone()).collect()
}

/// The payloads of a claim, in the order handed out.
pub fn payloads(claimed: &[ClaimedMessage]) -> Vec<String> {
    claimed.iter().map(|c| c.payload.clone()).collect()
}
