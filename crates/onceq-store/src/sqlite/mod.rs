//! The embedded backend: one SQLite file, `onceq.db` in the data directory.
//!
//! - `writer`: the one thread that writes, committing many concurrent
//!   requests in one transaction (group commit), each in its own savepoint.
//! - `reader`: read connections for the read-only operations.
//! - `conn`: opening connections, with the PRAGMAs each needs.
//! - `key_cache`: key lookups from memory, kept exact across processes by
//!   a marker file and a polled change count.
//! - `control`: BEGIN, COMMIT, ROLLBACK and savepoints, prepared once.
//! - `migrate`: schema migrations.
//! - `accounts`: credit limits, usage buckets, server heartbeats.
//! - `keys`, `queues`, `publish`, `claim`, `lease`, `dlq`,
//!   `browse`, `triage`, `subscriptions`, `cron`, `webhooks`, `maintenance`,
//!   `observe`, `finished`, `batch`: the
//!   operations, one concept each (the same modules as the PostgreSQL
//!   backend's), written against a plain `&Connection` so they run on either.
//! - `time`: timestamps as INTEGER microseconds.
//! - `errors`: SQLite errors as `StoreError`s.
//!
//! SQL lives in `sql/`, one statement per file named after what it does.
//!
//! Every call waits at most the store timeout (`StoreOptions::op_timeout`)
//! for the writer thread or a reader, then answers `Unavailable`. The
//! thread itself cannot be interrupted (a disk that hangs, a lock another
//! process holds up to `busy_timeout`); it skips the requests whose caller
//! has given up, and a write answered `Unavailable` that way may still be
//! committed by the group it was already in (docs/guarantees.md).

use std::path::Path;

use async_trait::async_trait;
use jiff::Timestamp;
use onceq_types::{QueueRecord, QueueStats};

use crate::{
    ClaimedMessage, DlqRedrive, DlqRedriveOne, ExtendOutcome, KeyInsert, KeyRecord, LeaseExpiry,
    LeaseRef, MessageAck, MessageClaim, MessageDelete, MessageExtend, MessageGet, MessageList,
    MessageNack, MessagePage, MessagePublish, MessageRecord, NackOutcome, OpenMode, ProjectRecord,
    PublishOutcome, QueueCreate, QueueCreated, QueueRef, RateLimit, RedriveOneOutcome,
    RedriveOutcome, Result, ServerHeartbeat, SingleOutcome, Store, StoreError, StoreOptions,
    SubscriptionDelete, SubscriptionDue, SubscriptionInsert, SubscriptionRecord, UsageQuery,
    UsageRow, UsageTotal,
};

/// A statement from `sql/<name>.sql` without its comment lines (`build.rs`),
/// for `prepare_cached`.
macro_rules! sql {
    ($name:literal) => {
        include_str!(concat!(
            env!("OUT_DIR"),
            "/onceq-store/src/sqlite/sql/",
            $name,
            ".sql"
        ))
    };
}

mod accounts;
mod batch;
mod browse;
mod claim;
mod conn;
mod control;
mod cron;
mod dlq;
mod errors;
mod finished;
mod key_cache;
mod keys;
mod lease;
mod ledger;
mod maintenance;
mod migrate;
mod observe;
mod publish;
mod queues;
mod reader;
mod subscriptions;
mod time;
mod triage;
mod vacuum;
mod webhooks;
mod writer;

/// The database file inside the data directory.
pub const DB_FILE: &str = "onceq.db";

/// The embedded store. Cheap to share behind an `Arc`; the writer thread
/// stops when the store is dropped (after finishing what it was sent).
#[derive(Debug)]
pub struct SqliteStore {
    writer: writer::Writer,
    readers: reader::Readers,
    keys: key_cache::Keys,
}

impl SqliteStore {
    /// Opens (creating if needed) `data_dir/onceq.db`, migrates it and starts
    /// the writer thread. With [`OpenMode::Existing`] a missing directory or
    /// file, or a file that is not onceq's, is refused instead.
    pub async fn open(data_dir: &Path) -> Result<SqliteStore> {
        SqliteStore::open_with(data_dir, StoreOptions::default()).await
    }

    /// [`open`](Self::open), every call bounded by `options.op_timeout`.
    pub async fn open_with(data_dir: &Path, options: StoreOptions) -> Result<SqliteStore> {
        let dir = data_dir.to_owned();
        let mode = options.mode;
        let (conn, path) = tokio::task::spawn_blocking(move || -> Result<_> {
            let path = dir.join(DB_FILE);
            match mode {
                OpenMode::Create => std::fs::create_dir_all(&dir)
                    .map_err(|e| StoreError::Unavailable(Box::new(e)))?,
                OpenMode::Existing => migrate::check_existing(&dir, &path)?,
            }
            let mut conn = conn::open_writer(&path)?;
            vacuum::ensure_incremental(&conn, mode)?;
            migrate::run(&mut conn, mode)?;
            Ok((conn, path))
        })
        .await
        .map_err(StoreError::internal)??;
        let readers = reader::Readers::new(path.clone(), options.op_timeout);
        Ok(SqliteStore {
            writer: writer::Writer::spawn(conn, options.op_timeout)?,
            keys: key_cache::Keys::start(data_dir, &path, readers.clone()),
            readers,
        })
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    /// A real write through the writer (one row, `sql/probe.sql`), committed
    /// with whatever group it joins: a store whose writes all fail (a full
    /// disk, a read-only file or directory) or whose writer is stuck is not
    /// ready, though its readers may still answer. One small commit per
    /// probe.
    async fn ping(&self) -> Result<()> {
        let now = time::micros(Timestamp::now());
        self.writer
            .run(move |tx| {
                tx.prepare_cached(sql!("probe"))?.execute([now])?;
                Ok(())
            })
            .await
    }

    async fn key_insert(&self, p: KeyInsert) -> Result<KeyRecord> {
        self.writer.run(move |tx| keys::insert(tx, &p)).await
    }

    async fn key_lookup(&self, key_hash: &[u8]) -> Result<Option<KeyRecord>> {
        let hash = key_hash.to_vec();
        let read = self.readers.run(move |conn| keys::lookup(conn, &hash));
        self.keys.lookup(key_hash, read).await
    }

    async fn key_list(&self) -> Result<Vec<KeyRecord>> {
        self.readers.run(keys::list).await
    }

    async fn key_revoke(&self, key_id: &str, now: Timestamp) -> Result<bool> {
        let key_id = key_id.to_owned();
        let revoked = self
            .writer
            .run(move |tx| keys::revoke(tx, &key_id, now))
            .await;
        self.keys.changed();
        revoked
    }

    async fn key_get(&self, key_id: &str) -> Result<Option<KeyRecord>> {
        let key_id = key_id.to_owned();
        self.readers.run(move |conn| keys::get(conn, &key_id)).await
    }

    async fn key_set_expiry(&self, key_id: &str, expires_at: Option<Timestamp>) -> Result<bool> {
        let key_id = key_id.to_owned();
        let set = self
            .writer
            .run(move |tx| keys::set_expiry(tx, &key_id, expires_at))
            .await;
        self.keys.changed();
        set
    }

    async fn key_set_rate(&self, key_id: &str, rate: Option<RateLimit>) -> Result<bool> {
        let key_id = key_id.to_owned();
        let set = self
            .writer
            .run(move |tx| keys::set_rate(tx, &key_id, rate))
            .await;
        self.keys.changed();
        set
    }

    async fn project_list(&self) -> Result<Vec<ProjectRecord>> {
        self.readers.run(accounts::project_list).await
    }

    async fn project_get(&self, name: &str) -> Result<Option<ProjectRecord>> {
        let name = name.to_owned();
        self.readers
            .run(move |conn| accounts::project_get(conn, &name))
            .await
    }

    async fn project_set_credit(&self, name: &str, limit_micros: Option<u64>) -> Result<bool> {
        let name = name.to_owned();
        self.writer
            .run(move |tx| accounts::project_set_credit(tx, &name, limit_micros))
            .await
    }

    async fn project_set_rate(&self, name: &str, rate: Option<RateLimit>) -> Result<bool> {
        let name = name.to_owned();
        self.writer
            .run(move |tx| accounts::project_set_rate(tx, &name, rate))
            .await
    }

    async fn usage_flush(&self, rows: Vec<UsageRow>) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        self.writer
            .run(move |tx| accounts::usage_flush(tx, &rows))
            .await
    }

    async fn usage_query(&self, q: UsageQuery) -> Result<Vec<UsageTotal>> {
        self.readers
            .run(move |conn| accounts::usage_query(conn, &q))
            .await
    }

    async fn server_heartbeat(&self, p: ServerHeartbeat) -> Result<u32> {
        self.writer
            .run(move |tx| accounts::server_heartbeat(tx, &p))
            .await
    }

    async fn server_leave(&self, server_id: &str) -> Result<()> {
        let server_id = server_id.to_owned();
        self.writer
            .run(move |tx| accounts::server_leave(tx, &server_id))
            .await
    }

    async fn queue_create(&self, p: QueueCreate) -> Result<QueueCreated> {
        self.writer.run(move |tx| queues::create(tx, &p)).await
    }

    async fn queue_update(&self, p: crate::QueueUpdate) -> Result<QueueRecord> {
        self.writer.run(move |tx| queues::update(tx, &p)).await
    }

    async fn queue_pause(&self, p: crate::QueuePause) -> Result<QueueRecord> {
        self.writer.run(move |tx| queues::pause(tx, &p)).await
    }

    async fn queue_get(&self, q: &QueueRef) -> Result<Option<QueueRecord>> {
        let q = q.clone();
        self.readers
            .run(move |conn| Ok(queues::find(conn, &q.project, &q.queue)?.map(|q| q.record)))
            .await
    }

    async fn queue_list(&self, project: &str) -> Result<Vec<QueueRecord>> {
        let project = project.to_owned();
        self.readers
            .run(move |conn| queues::list(conn, &project))
            .await
    }

    async fn queue_delete(&self, q: &QueueRef) -> Result<i64> {
        let q = q.clone();
        self.writer.run(move |tx| queues::delete(tx, &q)).await
    }

    async fn queue_stats(&self, q: &QueueRef, now: Timestamp) -> Result<QueueStats> {
        let q = q.clone();
        self.readers
            .run(move |conn| queues::stats(conn, &q, now))
            .await
    }

    async fn queue_purge(&self, q: &QueueRef) -> Result<i64> {
        let q = q.clone();
        self.writer.run(move |tx| queues::purge(tx, &q)).await
    }

    async fn message_publish(&self, p: MessagePublish) -> Result<Vec<PublishOutcome>> {
        self.writer.run(move |tx| publish::publish(tx, &p)).await
    }

    async fn message_publish_acking(
        &self,
        p: MessagePublish,
        acks: Vec<MessageAck>,
    ) -> crate::PublishedAcking {
        // One request of the writer, so one transaction: a publish that
        // fails undoes the acks with it, and the caller does them again.
        let done = self
            .writer
            .run(move |tx| {
                let outcomes = publish::publish(tx, &p)?;
                Ok((outcomes, batch::ack_each(tx, &acks)?))
            })
            .await;
        match done {
            Ok((outcomes, acked)) => crate::PublishedAcking {
                published: Ok(outcomes),
                acked: Some(acked),
            },
            Err(e) => crate::PublishedAcking {
                published: Err(e),
                acked: None,
            },
        }
    }

    async fn message_claim(&self, p: MessageClaim) -> Result<Vec<ClaimedMessage>> {
        self.writer.run(move |tx| claim::claim(tx, &p)).await
    }

    async fn message_ack(&self, p: MessageAck) -> Result<crate::AckOutcome> {
        if crate::rules::finished::may_keep(p.lease.receipt.as_deref()) {
            return self.writer.run(move |tx| finished::ack(tx, &p)).await;
        }
        self.writer.run(move |tx| lease::ack(tx, &p)).await
    }

    async fn message_nack(&self, p: MessageNack) -> Result<NackOutcome> {
        self.writer.run(move |tx| lease::nack(tx, &p)).await
    }

    async fn message_hand_back(&self, lease: LeaseRef) -> Result<bool> {
        self.writer
            .run(move |tx| lease::hand_back(tx, &lease))
            .await
    }

    async fn message_extend(&self, p: MessageExtend) -> Result<ExtendOutcome> {
        self.writer.run(move |tx| lease::extend(tx, &p)).await
    }

    async fn dlq_redrive(&self, p: DlqRedrive) -> Result<RedriveOutcome> {
        self.writer.run(move |tx| dlq::redrive(tx, &p)).await
    }

    async fn message_list(&self, p: MessageList) -> Result<MessagePage> {
        self.readers.run(move |conn| browse::list(conn, &p)).await
    }

    async fn message_get(&self, p: MessageGet) -> Result<Option<MessageRecord>> {
        self.readers.run(move |conn| browse::get(conn, &p)).await
    }

    async fn message_find(&self, p: MessageGet) -> Result<Option<crate::FoundMessage>> {
        self.readers
            .run(move |conn| browse::find_anywhere(conn, &p))
            .await
    }

    async fn finished_list(&self, p: crate::FinishedList) -> Result<crate::FinishedPage> {
        self.readers
            .run(move |conn| browse::finished_list(conn, &p))
            .await
    }

    async fn message_cancel(&self, p: crate::MessageCancel) -> Result<bool> {
        self.writer.run(move |tx| finished::cancel(tx, &p)).await
    }

    async fn message_delete(&self, p: MessageDelete) -> Result<SingleOutcome> {
        self.writer.run(move |tx| browse::delete(tx, &p)).await
    }

    async fn dlq_redrive_one(&self, p: DlqRedriveOne) -> Result<RedriveOneOutcome> {
        self.writer.run(move |tx| browse::redrive_one(tx, &p)).await
    }

    async fn message_ack_many(&self, acks: Vec<MessageAck>) -> Result<Vec<crate::AckOutcome>> {
        self.writer.run(move |tx| batch::ack_many(tx, &acks)).await
    }

    async fn message_ack_many_then_claim(
        &self,
        acks: Vec<MessageAck>,
        claim: MessageClaim,
    ) -> Result<(Vec<crate::AckOutcome>, Vec<ClaimedMessage>)> {
        crate::params::check_acks_of_claim(&acks, &claim)?;
        self.writer
            .run(move |tx| Ok((batch::ack_many(tx, &acks)?, claim::claim(tx, &claim)?)))
            .await
    }

    async fn message_nack_many(&self, nacks: Vec<MessageNack>) -> Result<Vec<NackOutcome>> {
        self.writer
            .run(move |tx| batch::nack_many(tx, &nacks))
            .await
    }

    async fn message_cancel_many(&self, p: crate::MessageIds) -> Result<Vec<SingleOutcome>> {
        self.writer.run(move |tx| batch::cancel_many(tx, &p)).await
    }

    async fn message_delete_many(&self, p: crate::MessageIds) -> Result<Vec<SingleOutcome>> {
        self.writer.run(move |tx| batch::delete_many(tx, &p)).await
    }

    async fn dlq_redrive_many(&self, p: crate::MessageIds) -> Result<crate::RedriveManyOutcome> {
        self.writer.run(move |tx| batch::redrive_many(tx, &p)).await
    }

    async fn message_promote_now(&self, p: crate::MessagePromote) -> Result<crate::PromoteOutcome> {
        self.writer.run(move |tx| triage::promote_now(tx, &p)).await
    }

    async fn message_payload_search(
        &self,
        p: crate::PayloadSearch,
    ) -> Result<crate::PayloadMatches> {
        self.readers
            .run(move |conn| triage::payload_search(conn, &p))
            .await
    }

    async fn subscription_insert(&self, p: SubscriptionInsert) -> Result<SubscriptionRecord> {
        self.writer
            .run(move |tx| subscriptions::insert(tx, &p))
            .await
    }

    async fn subscription_list(&self, q: &QueueRef) -> Result<Vec<SubscriptionRecord>> {
        let q = q.clone();
        self.readers
            .run(move |conn| subscriptions::list(conn, &q))
            .await
    }

    async fn subscription_delete(&self, p: SubscriptionDelete) -> Result<bool> {
        self.writer
            .run(move |tx| subscriptions::delete(tx, &p))
            .await
    }

    async fn subscription_scan(&self, now: Timestamp) -> Result<Vec<SubscriptionDue>> {
        self.readers
            .run(move |conn| subscriptions::scan(conn, now))
            .await
    }

    async fn cron_insert(&self, p: crate::CronInsert) -> Result<crate::CronInserted> {
        self.writer.run(move |tx| cron::insert(tx, &p)).await
    }

    async fn cron_get(&self, job: &crate::CronRef) -> Result<Option<crate::CronRecord>> {
        let job = job.clone();
        self.readers.run(move |conn| cron::get(conn, &job)).await
    }

    async fn cron_list(&self, project: &str) -> Result<Vec<crate::CronRecord>> {
        let project = project.to_owned();
        self.readers
            .run(move |conn| cron::list(conn, &project))
            .await
    }

    async fn cron_update(&self, p: crate::CronUpdate) -> Result<Option<crate::CronRecord>> {
        self.writer.run(move |tx| cron::update(tx, &p)).await
    }

    async fn cron_pause(&self, p: crate::CronPause) -> Result<Option<crate::CronRecord>> {
        self.writer.run(move |tx| cron::pause(tx, &p)).await
    }

    async fn cron_delete(&self, job: &crate::CronRef) -> Result<bool> {
        let job = job.clone();
        self.writer.run(move |tx| cron::delete(tx, &job)).await
    }

    async fn cron_due(
        &self,
        now: Timestamp,
        limit: u32,
        per_project: u32,
    ) -> Result<crate::CronDue> {
        self.readers
            .run(move |conn| cron::due(conn, now, limit, per_project))
            .await
    }

    async fn cron_advance(&self, p: crate::CronAdvance) -> Result<bool> {
        self.writer.run(move |tx| cron::advance(tx, &p)).await
    }

    async fn cron_run_outcome(&self, p: crate::CronRunOutcome) -> Result<bool> {
        self.writer.run(move |tx| cron::run_outcome(tx, &p)).await
    }

    async fn webhook_insert(&self, p: crate::WebhookInsert) -> Result<crate::WebhookRecord> {
        self.writer.run(move |tx| webhooks::insert(tx, &p)).await
    }

    async fn webhook_list(&self, project: &str) -> Result<Vec<crate::WebhookRecord>> {
        let project = project.to_owned();
        self.readers
            .run(move |conn| webhooks::list(conn, Some(&project)))
            .await
    }

    async fn webhook_delete(&self, w: &crate::WebhookRef) -> Result<bool> {
        let w = w.clone();
        self.writer.run(move |tx| webhooks::delete(tx, &w)).await
    }

    async fn webhook_scan(&self) -> Result<Vec<crate::WebhookRecord>> {
        self.readers
            .run(move |conn| webhooks::list(conn, None))
            .await
    }

    async fn webhook_event_insert(
        &self,
        p: crate::WebhookEventInsert,
    ) -> Result<Vec<crate::WebhookDelivery>> {
        self.writer
            .run(move |tx| webhooks::event_insert(tx, &p))
            .await
    }

    async fn webhook_delivery_claim(
        &self,
        p: crate::WebhookDeliveryClaim,
    ) -> Result<Vec<crate::WebhookDelivery>> {
        self.writer.run(move |tx| webhooks::claim(tx, &p)).await
    }

    async fn webhook_delivery_settle(&self, p: crate::WebhookDeliverySettle) -> Result<bool> {
        self.writer.run(move |tx| webhooks::settle(tx, &p)).await
    }

    async fn webhook_attempts(
        &self,
        w: &crate::WebhookRef,
        limit: u32,
    ) -> Result<Option<Vec<crate::WebhookAttemptRecord>>> {
        let w = w.clone();
        self.readers
            .run(move |conn| webhooks::attempts(conn, &w, limit))
            .await
    }

    async fn ledger_claim(&self, p: crate::LedgerClaim) -> Result<crate::LedgerClaimOutcome> {
        self.writer.run(move |tx| ledger::claim(tx, &p)).await
    }

    async fn ledger_complete(&self, p: crate::LedgerComplete) -> Result<bool> {
        self.writer.run(move |tx| ledger::complete(tx, &p)).await
    }

    async fn ledger_release(&self, p: crate::LedgerRelease) -> Result<bool> {
        self.writer.run(move |tx| ledger::release(tx, &p)).await
    }

    async fn ledger_purge(&self, now: Timestamp, limit: u32) -> Result<u64> {
        self.writer
            .run(move |tx| ledger::purge(tx, now, limit))
            .await
    }

    async fn ledger_usage(&self, project: &str) -> Result<crate::LedgerUsage> {
        let project = project.to_owned();
        self.readers
            .run(move |conn| ledger::usage(conn, &project))
            .await
    }

    async fn ledger_first_expiry(
        &self,
        project: &str,
        now: Timestamp,
    ) -> Result<Option<Timestamp>> {
        let project = project.to_owned();
        self.readers
            .run(move |conn| ledger::first_expiry(conn, &project, now))
            .await
    }

    async fn space_reclaim(&self, max_pages: u32) -> Result<u64> {
        self.writer
            .run(move |tx| vacuum::reclaim(tx, max_pages))
            .await
    }

    async fn lease_expire(&self, now: Timestamp, limit: u32) -> Result<LeaseExpiry> {
        self.writer
            .run(move |tx| maintenance::lease_expire(tx, now, limit))
            .await
    }

    async fn dedupe_purge(&self, now: Timestamp) -> Result<u64> {
        self.writer
            .run(move |tx| maintenance::dedupe_purge(tx, now))
            .await
    }

    async fn message_retention_purge(&self, now: Timestamp) -> Result<u64> {
        self.writer
            .run(move |tx| maintenance::retention_purge(tx, now))
            .await
    }

    async fn finished_purge(&self, now: Timestamp, limit: u32) -> Result<u64> {
        self.writer
            .run(move |tx| finished::purge(tx, now, limit))
            .await
    }

    async fn queue_depths(&self, now: Timestamp) -> Result<Vec<crate::QueueDepth>> {
        self.readers
            .run(move |conn| observe::queue_depths(conn, now))
            .await
    }

    fn pool_stats(&self) -> Vec<crate::PoolStats> {
        vec![self.readers.stats(), self.writer.stats()]
    }
}
