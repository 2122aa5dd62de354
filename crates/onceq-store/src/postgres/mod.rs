//! PostgreSQL backend: production, and safe for several servers sharing one
//! database.
//!
//! - `pool`: the connection pool (deadpool) and how a URL configures it.
//! - `migrate`: schema migrations under an advisory lock.
//! - `db`: how statements are sent: prepared and cached per connection,
//!   or unnamed behind a pooler in transaction mode (`pgbouncer=transaction`).
//! - `errors`: driver errors to [`StoreError`], and retrying transactions
//!   that lost a deadlock or a race.
//! - `sql`: every statement, one `.sql` file each under `sql/`.
//! - `accounts`: credit limits, usage buckets, server heartbeats.
//! - `publish_group`: group commit of concurrent publishes.
//! - `ack_group`: group commit of concurrent acks.
//! - `batch`: the batch forms of ack, nack, cancel, delete and redrive.
//! - `hot`: the connection each of those committers keeps, and how each
//!   takes its next group.
//! - `key_cache`: what keeps the key cache exact here: LISTEN/NOTIFY or,
//!   behind a pooler, a polled change count.
//! - `keys`, `queues`, `publish`, `claim`, `lease`, `dlq`,
//!   `browse`, `triage`, `subscriptions`, `cron`, `webhooks`, `maintenance`:
//!   the operations, by concept.
//! - `observe`: queue depths and pool use for `/metrics`.
//!
//! # Concurrency
//!
//! Everything runs at READ COMMITTED. Claims and the lease reaper lock rows
//! with `FOR UPDATE SKIP LOCKED`, so concurrent consumers never wait on each
//! other and a message is never handed to two of them; single-message
//! operations (ack, nack, extend) lock the one row they change. Dedupe relies
//! on the primary key of `onceq_dedupe_keys`: a second publisher of a key
//! blocks until the first commits, then conflicts.
//!
//! Every timestamp comes from the caller's `now`, never the database's
//! `now()`. PostgreSQL keeps microseconds, so stored times are the caller's
//! rounded to the microsecond; what operations return is what was stored.

mod accounts;
mod ack_group;
mod batch;
mod browse;
mod claim;
mod cron;
mod db;
mod dlq;
mod errors;
mod hot;
mod hot_functions;
mod key_cache;
mod keys;
mod lease;
mod ledger;
mod maintenance;
mod migrate;
mod observe;
mod pool;
mod publish;
mod publish_group;
mod queues;
mod sql;
mod subscriptions;
mod triage;
mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use crate::{OpenMode, Result, StoreError, StoreOptions};
use db::GenericClient;

/// The PostgreSQL store. Cheap to share: it is a connection pool.
pub struct PgStore {
    /// The pool, and how statements are sent on it (`db.rs`).
    db: db::Db,
    /// Where publishes go: they are stored in groups (see [`publish_group`]).
    publishes: publish_group::GroupCommit,
    /// Where acks go: they are deleted in groups (see [`ack_group`]).
    acks: ack_group::AckGroup,
    /// Key lookups, from memory while the listener (or the change count's
    /// poller) keeps them exact.
    keys: Arc<key_cache::KeyCache>,
    _key_watch: key_cache::Watch,
    /// Where claims go: those of one queue at once share a transaction
    /// (see [`claim`]).
    claims: claim::ClaimGroups,
    /// The store timeout: every operation answers within it
    /// ([`errors::within`]), `Unavailable` when the database did not.
    bound: Duration,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("pool", &self.db.status())
            .finish()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:pass@host:port/db?...`) and
    /// migrates the schema. The pool holds up to 16 connections unless the
    /// URL says `pool_size=N`; connections are opened on demand.
    ///
    /// `Unavailable` when the database cannot be reached.
    pub async fn connect(url: &str) -> Result<PgStore> {
        PgStore::connect_with(url, StoreOptions::default()).await
    }

    /// [`connect`](Self::connect), every operation bounded by
    /// `options.op_timeout` (see [`StoreOptions`]). The migration is not:
    /// it may wait for another server's migration to finish (it still
    /// cannot wait for a connection longer than the bound). With
    /// [`OpenMode::Existing`] a database without onceq's schema is refused
    /// before anything is written to it.
    pub async fn connect_with(url: &str, options: StoreOptions) -> Result<PgStore> {
        let bound = options.op_timeout;
        let (pool, pg, ours, read_only) = pool::build(url, bound)?;
        let setup = async {
            let mut client = pool.get().await?;
            migrate::check_writable(&client, url).await?;
            if options.mode == OpenMode::Existing {
                migrate::check_existing(&client, url).await?;
            }
            migrate::run(&mut client, ours.behind_pooler, options.mode).await?;
            match ours.behind_pooler {
                true => Ok(db::Statements::learn(&client).await?),
                false => Ok::<_, errors::Error>(db::Statements::Prepared),
            }
        };
        let statements = setup.await.map_err(errors::Error::into_store)?;
        let db = db::Db::new(pool, statements, read_only);
        let publishes = publish_group::GroupCommit::start(db.clone(), bound);
        let acks = ack_group::AckGroup::start(db.clone(), bound);
        let claims = claim::ClaimGroups::new(db.clone(), bound);
        // LISTEN does not survive a pooler in transaction mode (it lands on
        // a server connection that is then handed to others): the change
        // count is polled instead.
        let (keys, _key_watch) = match ours.behind_pooler {
            true => key_cache::polled(db.clone()),
            false => key_cache::listened(pg, db.clone()),
        };
        Ok(PgStore {
            db,
            publishes,
            acks,
            keys,
            _key_watch,
            claims,
            bound,
        })
    }

    /// Migrates the schema at `url`, as [`connect`](Self::connect) does, on
    /// a connection of its own that is closed when this returns: no pool,
    /// no committers, no key listener. For a database that is prepared and
    /// then copied (`CREATE DATABASE ... TEMPLATE`, which PostgreSQL allows
    /// only while nobody is connected to the original), as tests do.
    ///
    /// `Unavailable` when the database cannot be reached.
    pub async fn migrate(url: &str) -> Result<()> {
        let (_, pg, _, _) = pool::build(url, crate::DEFAULT_OP_TIMEOUT)?;
        let into_store = |e| errors::Error::into_store(errors::Error::Db(e));
        let (mut client, connection) = pg.config().connect(pg.tls()).await.map_err(into_store)?;
        let connection = tokio::spawn(connection);
        let migrated = migrate::run_on(&mut client).await;
        // Closed, and the server told, before we return.
        drop(client);
        let closed = connection.await.map_err(StoreError::internal)?;
        migrated.map_err(errors::Error::into_store)?;
        closed.map_err(into_store)
    }

    /// A database migrated as [`migrate`](Self::migrate) leaves it, for this
    /// crate's tests: a copy of a template migrated once per test process.
    #[cfg(test)]
    pub(crate) async fn test_database() -> onceq_testdb::TestDatabase {
        onceq_testdb::database_from_template("onceq", |url| async move {
            PgStore::migrate(&url).await.expect("migrate the template");
        })
        .await
    }

    /// A pooled connection.
    async fn client(&self) -> Result<db::Conn, errors::Error> {
        Ok(self.db.get().await?)
    }

    /// One round trip ([`sql::PING`]): `Ok` when the database answers and
    /// can write, `Unavailable` when it is a standby or read-only.
    async fn ping_once(&self) -> Result<(), errors::Error> {
        let client = self.client().await?;
        let stmt = client.prepare_cached(sql::PING).await?;
        let row = client.query_one(&stmt, &[]).await?;
        let (in_recovery, read_only): (bool, &str) = (row.get(0), row.get(1));
        if in_recovery || read_only == "on" {
            return Err(StoreError::Unavailable(
                "the database is read-only (a standby, or transaction_read_only is on): \
                 every write would fail"
                    .into(),
            )
            .into());
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl crate::Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    /// Connected to a writable primary, within the store timeout: a standby
    /// (or a read-only session) answers reads but fails every write, so it
    /// is not ready.
    async fn ping(&self) -> Result<()> {
        errors::retrying(self.bound, || self.ping_once()).await
    }

    async fn key_insert(&self, p: crate::KeyInsert) -> Result<crate::KeyRecord> {
        errors::retrying(self.bound, || self.key_insert_once(&p)).await
    }

    async fn key_lookup(&self, key_hash: &[u8]) -> Result<Option<crate::KeyRecord>> {
        let read = errors::retrying(self.bound, || self.key_lookup_once(key_hash));
        self.keys.lookup(key_hash, read).await
    }

    async fn key_list(&self) -> Result<Vec<crate::KeyRecord>> {
        errors::retrying(self.bound, || self.key_list_once()).await
    }

    async fn key_revoke(&self, key_id: &str, now: jiff::Timestamp) -> Result<bool> {
        let revoked = errors::retrying(self.bound, || self.key_revoke_once(key_id, now)).await;
        // This process sees its own change at once; others on its NOTIFY
        // (or their next poll of the change count).
        self.keys.clear();
        revoked
    }

    async fn key_get(&self, key_id: &str) -> Result<Option<crate::KeyRecord>> {
        errors::retrying(self.bound, || self.key_get_once(key_id)).await
    }

    async fn key_set_expiry(
        &self,
        key_id: &str,
        expires_at: Option<jiff::Timestamp>,
    ) -> Result<bool> {
        let set =
            errors::retrying(self.bound, || self.key_set_expiry_once(key_id, expires_at)).await;
        self.keys.clear();
        set
    }

    async fn key_set_rate(&self, key_id: &str, rate: Option<crate::RateLimit>) -> Result<bool> {
        let set = errors::retrying(self.bound, || self.key_set_rate_once(key_id, rate)).await;
        self.keys.clear();
        set
    }

    async fn project_list(&self) -> Result<Vec<crate::ProjectRecord>> {
        errors::retrying(self.bound, || self.project_list_once()).await
    }

    async fn project_get(&self, name: &str) -> Result<Option<crate::ProjectRecord>> {
        errors::retrying(self.bound, || self.project_get_once(name)).await
    }

    async fn project_set_credit(&self, name: &str, limit_micros: Option<u64>) -> Result<bool> {
        errors::retrying(self.bound, || {
            self.project_set_credit_once(name, limit_micros)
        })
        .await
    }

    async fn project_set_rate(&self, name: &str, rate: Option<crate::RateLimit>) -> Result<bool> {
        errors::retrying(self.bound, || self.project_set_rate_once(name, rate)).await
    }

    async fn usage_flush(&self, rows: Vec<crate::UsageRow>) -> Result<()> {
        errors::retrying(self.bound, || self.usage_flush_once(&rows)).await
    }

    async fn usage_query(&self, q: crate::UsageQuery) -> Result<Vec<crate::UsageTotal>> {
        errors::retrying(self.bound, || self.usage_query_once(&q)).await
    }

    async fn server_heartbeat(&self, p: crate::ServerHeartbeat) -> Result<u32> {
        errors::retrying(self.bound, || self.server_heartbeat_once(&p)).await
    }

    async fn server_leave(&self, server_id: &str) -> Result<()> {
        errors::retrying(self.bound, || self.server_leave_once(server_id)).await
    }

    async fn queue_create(&self, p: crate::QueueCreate) -> Result<crate::QueueCreated> {
        crate::rules::queue_create::check_not_own_dead_letter_queue(&p.queue.queue, &p.settings)?;
        errors::retrying(self.bound, || self.queue_create_once(&p)).await
    }

    async fn queue_update(&self, p: crate::QueueUpdate) -> Result<onceq_types::QueueRecord> {
        errors::retrying(self.bound, || self.queue_update_once(&p)).await
    }

    async fn queue_pause(&self, p: crate::QueuePause) -> Result<onceq_types::QueueRecord> {
        errors::retrying(self.bound, || self.queue_pause_once(&p)).await
    }

    async fn queue_get(&self, q: &crate::QueueRef) -> Result<Option<onceq_types::QueueRecord>> {
        errors::retrying(self.bound, || self.queue_get_once(q)).await
    }

    async fn queue_list(&self, project: &str) -> Result<Vec<onceq_types::QueueRecord>> {
        errors::retrying(self.bound, || self.queue_list_once(project)).await
    }

    async fn queue_delete(&self, q: &crate::QueueRef) -> Result<i64> {
        errors::retrying(self.bound, || self.queue_delete_once(q)).await
    }

    async fn queue_stats(
        &self,
        q: &crate::QueueRef,
        now: jiff::Timestamp,
    ) -> Result<onceq_types::QueueStats> {
        errors::retrying(self.bound, || self.queue_stats_once(q, now)).await
    }

    async fn queue_purge(&self, q: &crate::QueueRef) -> Result<i64> {
        errors::retrying(self.bound, || self.queue_purge_once(q)).await
    }

    async fn message_publish(
        &self,
        p: crate::MessagePublish,
    ) -> Result<Vec<crate::PublishOutcome>> {
        self.publishes.publish(p).await
    }

    async fn message_publish_acking(
        &self,
        p: crate::MessagePublish,
        acks: Vec<crate::MessageAck>,
    ) -> crate::PublishedAcking {
        self.publishes.publish_acking(p, acks).await
    }

    async fn message_claim(&self, p: crate::MessageClaim) -> Result<Vec<crate::ClaimedMessage>> {
        let (_, claimed) = self.claims.claim(Vec::new(), p).await?;
        Ok(claimed)
    }

    async fn message_ack(&self, p: crate::MessageAck) -> Result<crate::AckOutcome> {
        self.acks.ack(p).await
    }

    async fn message_nack(&self, p: crate::MessageNack) -> Result<crate::NackOutcome> {
        errors::retrying(self.bound, || self.nack_once(&p)).await
    }

    async fn message_hand_back(&self, lease: crate::LeaseRef) -> Result<bool> {
        errors::retrying(self.bound, || self.hand_back_once(&lease)).await
    }

    async fn message_extend(&self, p: crate::MessageExtend) -> Result<crate::ExtendOutcome> {
        errors::retrying(self.bound, || self.extend_once(&p)).await
    }

    async fn dlq_redrive(&self, p: crate::DlqRedrive) -> Result<crate::RedriveOutcome> {
        errors::retrying(self.bound, || self.redrive_once(&p)).await
    }

    async fn message_list(&self, p: crate::MessageList) -> Result<crate::MessagePage> {
        errors::retrying(self.bound, || self.message_list_once(&p)).await
    }

    async fn message_get(&self, p: crate::MessageGet) -> Result<Option<crate::MessageRecord>> {
        errors::retrying(self.bound, || self.message_get_once(&p)).await
    }

    async fn message_find(&self, p: crate::MessageGet) -> Result<Option<crate::FoundMessage>> {
        errors::retrying(self.bound, || self.message_find_once(&p)).await
    }

    async fn finished_list(&self, p: crate::FinishedList) -> Result<crate::FinishedPage> {
        errors::retrying(self.bound, || self.finished_list_once(&p)).await
    }

    async fn message_cancel(&self, p: crate::MessageCancel) -> Result<bool> {
        errors::retrying(self.bound, || self.cancel_once(&p)).await
    }

    async fn message_delete(&self, p: crate::MessageDelete) -> Result<crate::SingleOutcome> {
        errors::retrying(self.bound, || self.message_delete_once(&p)).await
    }

    async fn dlq_redrive_one(&self, p: crate::DlqRedriveOne) -> Result<crate::RedriveOneOutcome> {
        errors::retrying(self.bound, || self.redrive_one_once(&p)).await
    }

    async fn message_ack_many(
        &self,
        acks: Vec<crate::MessageAck>,
    ) -> Result<Vec<crate::AckOutcome>> {
        crate::params::check_batch(acks.len())?;
        self.acks.ack_many(acks).await
    }

    async fn message_ack_many_then_claim(
        &self,
        acks: Vec<crate::MessageAck>,
        claim: crate::MessageClaim,
    ) -> Result<(Vec<crate::AckOutcome>, Vec<crate::ClaimedMessage>)> {
        crate::params::check_acks_of_claim(&acks, &claim)?;
        self.claims.claim(acks, claim).await
    }

    async fn message_nack_many(
        &self,
        nacks: Vec<crate::MessageNack>,
    ) -> Result<Vec<crate::NackOutcome>> {
        errors::retrying(self.bound, || self.nack_many_once(&nacks)).await
    }

    async fn message_cancel_many(&self, p: crate::MessageIds) -> Result<Vec<crate::SingleOutcome>> {
        errors::retrying(self.bound, || self.cancel_many_once(&p)).await
    }

    async fn message_delete_many(&self, p: crate::MessageIds) -> Result<Vec<crate::SingleOutcome>> {
        errors::retrying(self.bound, || self.delete_many_once(&p)).await
    }

    async fn dlq_redrive_many(&self, p: crate::MessageIds) -> Result<crate::RedriveManyOutcome> {
        errors::retrying(self.bound, || self.redrive_many_once(&p)).await
    }

    async fn message_promote_now(&self, p: crate::MessagePromote) -> Result<crate::PromoteOutcome> {
        errors::retrying(self.bound, || self.promote_now_once(&p)).await
    }

    async fn message_payload_search(
        &self,
        p: crate::PayloadSearch,
    ) -> Result<crate::PayloadMatches> {
        errors::retrying(self.bound, || self.payload_search_once(&p)).await
    }

    async fn subscription_insert(
        &self,
        p: crate::SubscriptionInsert,
    ) -> Result<crate::SubscriptionRecord> {
        // Made once, so a retried insert reuses it.
        let id = crate::ids::subscription_id();
        errors::retrying(self.bound, || self.subscription_insert_once(&p, &id)).await
    }

    async fn subscription_list(
        &self,
        q: &crate::QueueRef,
    ) -> Result<Vec<crate::SubscriptionRecord>> {
        errors::retrying(self.bound, || self.subscription_list_once(q)).await
    }

    async fn subscription_delete(&self, p: crate::SubscriptionDelete) -> Result<bool> {
        errors::retrying(self.bound, || self.subscription_delete_once(&p)).await
    }

    async fn subscription_scan(&self, now: jiff::Timestamp) -> Result<Vec<crate::SubscriptionDue>> {
        errors::retrying(self.bound, || self.subscription_scan_once(now)).await
    }

    async fn cron_insert(&self, p: crate::CronInsert) -> Result<crate::CronInserted> {
        // Made once, so a retried insert reuses it.
        let id = crate::ids::cron_id();
        errors::retrying(self.bound, || self.cron_insert_once(&p, &id)).await
    }

    async fn cron_get(&self, job: &crate::CronRef) -> Result<Option<crate::CronRecord>> {
        errors::retrying(self.bound, || self.cron_get_once(job)).await
    }

    async fn cron_list(&self, project: &str) -> Result<Vec<crate::CronRecord>> {
        errors::retrying(self.bound, || self.cron_list_once(project)).await
    }

    async fn cron_update(&self, p: crate::CronUpdate) -> Result<Option<crate::CronRecord>> {
        errors::retrying(self.bound, || self.cron_update_once(&p)).await
    }

    async fn cron_pause(&self, p: crate::CronPause) -> Result<Option<crate::CronRecord>> {
        errors::retrying(self.bound, || self.cron_pause_once(&p)).await
    }

    async fn cron_delete(&self, job: &crate::CronRef) -> Result<bool> {
        errors::retrying(self.bound, || self.cron_delete_once(job)).await
    }

    async fn cron_due(
        &self,
        now: jiff::Timestamp,
        limit: u32,
        per_project: u32,
    ) -> Result<crate::CronDue> {
        errors::retrying(self.bound, || self.cron_due_once(now, limit, per_project)).await
    }

    async fn cron_advance(&self, p: crate::CronAdvance) -> Result<bool> {
        errors::retrying(self.bound, || self.cron_advance_once(&p)).await
    }

    async fn cron_run_outcome(&self, p: crate::CronRunOutcome) -> Result<bool> {
        errors::retrying(self.bound, || self.cron_run_outcome_once(&p)).await
    }

    async fn webhook_insert(&self, p: crate::WebhookInsert) -> Result<crate::WebhookRecord> {
        // Made once, so a retried insert reuses it.
        let id = crate::ids::webhook_id();
        errors::retrying(self.bound, || self.webhook_insert_once(&p, &id)).await
    }

    async fn webhook_list(&self, project: &str) -> Result<Vec<crate::WebhookRecord>> {
        errors::retrying(self.bound, || self.webhook_list_once(Some(project))).await
    }

    async fn webhook_delete(&self, w: &crate::WebhookRef) -> Result<bool> {
        errors::retrying(self.bound, || self.webhook_delete_once(w)).await
    }

    async fn webhook_scan(&self) -> Result<Vec<crate::WebhookRecord>> {
        errors::retrying(self.bound, || self.webhook_list_once(None)).await
    }

    async fn webhook_event_insert(
        &self,
        p: crate::WebhookEventInsert,
    ) -> Result<Vec<crate::WebhookDelivery>> {
        // A retry after a lost answer adds nothing: (webhook, event id) is
        // unique.
        errors::retrying(self.bound, || self.webhook_event_insert_once(&p)).await
    }

    async fn webhook_delivery_claim(
        &self,
        p: crate::WebhookDeliveryClaim,
    ) -> Result<Vec<crate::WebhookDelivery>> {
        errors::retrying(self.bound, || self.webhook_delivery_claim_once(&p)).await
    }

    async fn webhook_delivery_settle(&self, p: crate::WebhookDeliverySettle) -> Result<bool> {
        errors::retrying(self.bound, || self.webhook_delivery_settle_once(&p)).await
    }

    async fn webhook_attempts(
        &self,
        w: &crate::WebhookRef,
        limit: u32,
    ) -> Result<Option<Vec<crate::WebhookAttemptRecord>>> {
        errors::retrying(self.bound, || self.webhook_attempts_once(w, limit)).await
    }

    async fn ledger_claim(&self, p: crate::LedgerClaim) -> Result<crate::LedgerClaimOutcome> {
        errors::retrying(self.bound, || self.ledger_claim_once(&p)).await
    }

    async fn ledger_complete(&self, p: crate::LedgerComplete) -> Result<bool> {
        errors::retrying(self.bound, || self.ledger_complete_once(&p)).await
    }

    async fn ledger_release(&self, p: crate::LedgerRelease) -> Result<bool> {
        errors::retrying(self.bound, || self.ledger_release_once(&p)).await
    }

    async fn ledger_purge(&self, now: jiff::Timestamp, limit: u32) -> Result<u64> {
        errors::retrying(self.bound, || self.ledger_purge_once(now, limit)).await
    }

    async fn ledger_usage(&self, project: &str) -> Result<crate::LedgerUsage> {
        errors::retrying(self.bound, || self.ledger_usage_once(project)).await
    }

    async fn ledger_first_expiry(
        &self,
        project: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<jiff::Timestamp>> {
        errors::retrying(self.bound, || self.ledger_first_expiry_once(project, now)).await
    }

    /// PostgreSQL reuses the space of deleted rows itself (autovacuum):
    /// nothing to give back by hand.
    async fn space_reclaim(&self, _max_pages: u32) -> Result<u64> {
        Ok(0)
    }

    async fn lease_expire(&self, now: jiff::Timestamp, limit: u32) -> Result<crate::LeaseExpiry> {
        errors::retrying(self.bound, || self.lease_expire_once(now, limit)).await
    }

    async fn dedupe_purge(&self, now: jiff::Timestamp) -> Result<u64> {
        errors::retrying(self.bound, || self.dedupe_purge_once(now)).await
    }

    async fn message_retention_purge(&self, now: jiff::Timestamp) -> Result<u64> {
        errors::retrying(self.bound, || self.retention_purge_once(now)).await
    }

    async fn finished_purge(&self, now: jiff::Timestamp, limit: u32) -> Result<u64> {
        errors::retrying(self.bound, || self.finished_purge_once(now, limit)).await
    }

    async fn queue_depths(&self, now: jiff::Timestamp) -> Result<Vec<crate::QueueDepth>> {
        errors::retrying(self.bound, || self.queue_depths_once(now)).await
    }

    fn pool_stats(&self) -> Vec<crate::PoolStats> {
        self.pool_stats_now()
    }
}

#[cfg(test)]
mod rule_tests;
#[cfg(test)]
mod tests;
