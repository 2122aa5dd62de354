//! [`Traced`]: a [`Store`] that wraps each call of another in a span, so a
//! trace shows every store operation under the request (or background
//! task) that made it.
//!
//! The span is named by the operation (`message_publish`, …) and carries
//! the OpenTelemetry database conventions (`db.system.name`,
//! `db.operation.name`, kind client). It is at DEBUG: with trace export off
//! and logs at INFO no layer wants it, so its callsite is disabled and a
//! call costs an interest check and one more boxed future. A call made
//! outside any span (the lease reaper's tick, the account sync's flush)
//! gets none, or every server would export several root traces a second
//! of its own housekeeping.

use std::sync::Arc;

use tracing::{Instrument, Span};

use crate::Store;

/// Every call of `inner`, in a span (see the module doc).
pub struct Traced {
    inner: Arc<dyn Store>,
    system: &'static str,
}

impl Traced {
    /// Wraps `inner`.
    pub fn wrap(inner: Arc<dyn Store>) -> Arc<dyn Store> {
        let system = match inner.backend() {
            "postgres" => "postgresql",
            other => other,
        };
        Arc::new(Self { inner, system })
    }

    fn span(&self, op: &'static str) -> Span {
        if Span::current().is_none() {
            return Span::none();
        }
        tracing::debug_span!(
            "store",
            otel.name = op,
            otel.kind = "client",
            db.system.name = self.system,
            db.operation.name = op,
        )
    }
}

// One forwarding method per operation: the macro writes them so that a
// new `Store` method is one more line here, not one more copy of the body.
macro_rules! traced {
    ($( fn $name:ident(&self $(, $arg:ident : $ty:ty)*) -> $ret:ty; )*) => {
        #[async_trait::async_trait]
        impl Store for Traced {
            fn backend(&self) -> &'static str {
                self.inner.backend()
            }

            fn pool_stats(&self) -> Vec<crate::PoolStats> {
                self.inner.pool_stats()
            }

            $(
                async fn $name(&self $(, $arg: $ty)*) -> $ret {
                    self.inner
                        .$name($($arg),*)
                        .instrument(self.span(stringify!($name)))
                        .await
                }
            )*
        }
    };
}

use crate::{Result, *};
use jiff::Timestamp;
use onceq_types::{QueueRecord, QueueStats};

traced! {
    fn ping(&self) -> Result<()>;
    fn key_insert(&self, p: KeyInsert) -> Result<KeyRecord>;
    fn key_lookup(&self, key_hash: &[u8]) -> Result<Option<KeyRecord>>;
    fn key_list(&self) -> Result<Vec<KeyRecord>>;
    fn key_revoke(&self, key_id: &str, now: Timestamp) -> Result<bool>;
    fn key_get(&self, key_id: &str) -> Result<Option<KeyRecord>>;
    fn key_set_expiry(&self, key_id: &str, expires_at: Option<Timestamp>) -> Result<bool>;
    fn key_set_rate(&self, key_id: &str, rate: Option<RateLimit>) -> Result<bool>;
    fn project_list(&self) -> Result<Vec<ProjectRecord>>;
    fn project_get(&self, name: &str) -> Result<Option<ProjectRecord>>;
    fn project_set_credit(&self, name: &str, limit_micros: Option<u64>) -> Result<bool>;
    fn project_set_rate(&self, name: &str, rate: Option<RateLimit>) -> Result<bool>;
    fn usage_flush(&self, rows: Vec<UsageRow>) -> Result<()>;
    fn usage_query(&self, q: UsageQuery) -> Result<Vec<UsageTotal>>;
    fn server_heartbeat(&self, p: ServerHeartbeat) -> Result<u32>;
    fn server_leave(&self, server_id: &str) -> Result<()>;
    fn queue_create(&self, p: QueueCreate) -> Result<QueueCreated>;
    fn queue_update(&self, p: QueueUpdate) -> Result<QueueRecord>;
    fn queue_pause(&self, p: QueuePause) -> Result<QueueRecord>;
    fn queue_get(&self, q: &QueueRef) -> Result<Option<QueueRecord>>;
    fn queue_list(&self, project: &str) -> Result<Vec<QueueRecord>>;
    fn queue_delete(&self, q: &QueueRef) -> Result<i64>;
    fn queue_stats(&self, q: &QueueRef, now: Timestamp) -> Result<QueueStats>;
    fn queue_purge(&self, q: &QueueRef) -> Result<i64>;
    fn message_publish(&self, p: MessagePublish) -> Result<Vec<PublishOutcome>>;
    fn message_publish_acking(&self, p: MessagePublish, acks: Vec<MessageAck>) -> PublishedAcking;
    fn message_claim(&self, p: MessageClaim) -> Result<Vec<ClaimedMessage>>;
    fn message_ack(&self, p: MessageAck) -> Result<AckOutcome>;
    fn message_nack(&self, p: MessageNack) -> Result<NackOutcome>;
    fn message_cancel(&self, p: MessageCancel) -> Result<bool>;
    fn message_hand_back(&self, lease: LeaseRef) -> Result<bool>;
    fn message_extend(&self, p: MessageExtend) -> Result<ExtendOutcome>;
    fn dlq_redrive(&self, p: DlqRedrive) -> Result<RedriveOutcome>;
    fn message_list(&self, p: MessageList) -> Result<MessagePage>;
    fn message_get(&self, p: MessageGet) -> Result<Option<MessageRecord>>;
    fn message_find(&self, p: MessageGet) -> Result<Option<FoundMessage>>;
    fn finished_list(&self, p: FinishedList) -> Result<FinishedPage>;
    fn message_delete(&self, p: MessageDelete) -> Result<SingleOutcome>;
    fn dlq_redrive_one(&self, p: DlqRedriveOne) -> Result<RedriveOneOutcome>;
    fn message_promote_now(&self, p: MessagePromote) -> Result<PromoteOutcome>;
    fn message_ack_many(&self, acks: Vec<MessageAck>) -> Result<Vec<AckOutcome>>;
    fn message_ack_many_then_claim(
        &self,
        acks: Vec<MessageAck>,
        claim: MessageClaim
    ) -> Result<(Vec<AckOutcome>, Vec<ClaimedMessage>)>;
    fn message_nack_many(&self, nacks: Vec<MessageNack>) -> Result<Vec<NackOutcome>>;
    fn message_cancel_many(&self, p: MessageIds) -> Result<Vec<SingleOutcome>>;
    fn message_delete_many(&self, p: MessageIds) -> Result<Vec<SingleOutcome>>;
    fn dlq_redrive_many(&self, p: MessageIds) -> Result<RedriveManyOutcome>;
    fn message_payload_search(&self, p: PayloadSearch) -> Result<PayloadMatches>;
    fn subscription_insert(&self, p: SubscriptionInsert) -> Result<SubscriptionRecord>;
    fn subscription_list(&self, q: &QueueRef) -> Result<Vec<SubscriptionRecord>>;
    fn subscription_delete(&self, p: SubscriptionDelete) -> Result<bool>;
    fn subscription_scan(&self, now: Timestamp) -> Result<Vec<SubscriptionDue>>;
    fn cron_insert(&self, p: CronInsert) -> Result<CronInserted>;
    fn cron_get(&self, job: &CronRef) -> Result<Option<CronRecord>>;
    fn cron_list(&self, project: &str) -> Result<Vec<CronRecord>>;
    fn cron_update(&self, p: CronUpdate) -> Result<Option<CronRecord>>;
    fn cron_pause(&self, p: CronPause) -> Result<Option<CronRecord>>;
    fn cron_delete(&self, job: &CronRef) -> Result<bool>;
    fn cron_due(&self, now: Timestamp, limit: u32, per_project: u32) -> Result<CronDue>;
    fn cron_advance(&self, p: CronAdvance) -> Result<bool>;
    fn cron_run_outcome(&self, p: CronRunOutcome) -> Result<bool>;
    fn webhook_insert(&self, p: WebhookInsert) -> Result<WebhookRecord>;
    fn webhook_list(&self, project: &str) -> Result<Vec<WebhookRecord>>;
    fn webhook_delete(&self, w: &WebhookRef) -> Result<bool>;
    fn webhook_scan(&self) -> Result<Vec<WebhookRecord>>;
    fn webhook_event_insert(&self, p: WebhookEventInsert) -> Result<Vec<WebhookDelivery>>;
    fn webhook_delivery_claim(&self, p: WebhookDeliveryClaim) -> Result<Vec<WebhookDelivery>>;
    fn webhook_delivery_settle(&self, p: WebhookDeliverySettle) -> Result<bool>;
    fn webhook_attempts(&self, w: &WebhookRef, limit: u32) -> Result<Option<Vec<WebhookAttemptRecord>>>;
    fn ledger_claim(&self, p: LedgerClaim) -> Result<LedgerClaimOutcome>;
    fn ledger_complete(&self, p: LedgerComplete) -> Result<bool>;
    fn ledger_release(&self, p: LedgerRelease) -> Result<bool>;
    fn ledger_purge(&self, now: Timestamp, limit: u32) -> Result<u64>;
    fn ledger_usage(&self, project: &str) -> Result<LedgerUsage>;
    fn ledger_first_expiry(&self, project: &str, now: Timestamp) -> Result<Option<Timestamp>>;
    fn space_reclaim(&self, max_pages: u32) -> Result<u64>;
    fn lease_expire(&self, now: Timestamp, limit: u32) -> Result<LeaseExpiry>;
    fn dedupe_purge(&self, now: Timestamp) -> Result<u64>;
    fn message_retention_purge(&self, now: Timestamp) -> Result<u64>;
    fn finished_purge(&self, now: Timestamp, limit: u32) -> Result<u64>;
    fn queue_depths(&self, now: Timestamp) -> Result<Vec<QueueDepth>>;
}
