//! The storage seam. The server holds an `Arc<dyn Store>` and nothing else.
//!
//! # Semantics every backend implements (the conformance suite checks them)
//!
//! States of a message (`docs/state-machines.md`): `available`, `delayed`,
//! `in_flight` (`onceq_messages`); acked and cancelled messages of a queue
//! with `completed_retention_seconds > 0` move to `onceq_finished` as
//! `completed` / `cancelled` until their time is up (`finished_purge`),
//! otherwise they are deleted (gone), as purged and expired ones are;
//! dead-lettering moves the row to the dead-letter queue (`available` there,
//! same id, payload, `delivery_count` and history).
//!
//! - **Attempts**: every hand-out that ends (ack where kept, nack, lease
//!   expiry, failed push, cancel) appends `{delivery_count, consumed_at,
//!   ended_at, outcome, error}` to the message's history, the 20 latest kept
//!   (`rules::attempts`); a failure's error becomes `last_error` (one without
//!   keeps the one before). The failure that dead-letters is one attempt,
//!   `dead_lettered`. Redrive keeps the history. A claim sets `consumed_at`.
//! - **Finished**: not counted, never claimed, never a FIFO head; an ack keeps
//!   its message only when its lease was granted while the queue kept
//!   finished messages (receipt `rcpt_k…`) or it names no receipt
//!   (`rules::finished`).
//!
//! - **Order**: available messages go out by `priority` descending, then in
//!   publish order (oldest first); FIFO queues: see below.
//! - **Delay**: a `delayed` message whose time has come counts as available
//!   and is handed out by the next claim on its queue.
//! - **Leases**: a claim sets `in_flight`, increments `delivery_count`, sets a
//!   new random receipt and `lease_expires_at = now + timeout`. A message is
//!   handed out at most `max_retries + 1` times: when a hand-out fails (nack
//!   with requeue, or lease expiry) and `delivery_count >= max_retries + 1`,
//!   the message moves to the dead-letter queue instead of back.
//!   A queue without a DLQ requeues instead.
//! - **Receipts**: ack/nack/extend with `receipt: Some` only act on the lease
//!   that receipt names. An in-flight message whose lease has expired but has
//!   not been reaped yet can still be acked by its holder (no one else has
//!   it).
//! - **Dedupe**: `(queue, idempotency_key)` stores one message within the
//!   window, however concurrent the publishes; the key outlives the message.
//!   A key whose window passed is treated as absent (and replaced).
//! - **Tenancy**: every queue lookup is by `(project, name)`.
//! - **Push subscriptions** belong to a queue and go with it. They hold no
//!   delivery state: the push dispatcher claims, acks and nacks messages
//!   like any consumer, so deliveries live in the messages' leases.
//! - **Account webhooks** belong to a project. An event is an outbox row
//!   per listening webhook (its type listed, or `*`), unique by
//!   `(webhook, event id)`; a claim takes rows due at `now` no other claim
//!   holds, moves them due to the claim's end and counts the attempt; a
//!   settle records the attempt (the newest
//!   `onceq_types::webhook::MAX_ATTEMPTS_KEPT` kept per webhook) and
//!   reschedules or removes the row. Deleting a webhook deletes its rows
//!   and attempts.
//!
//! # FIFO queues (`queue_type: fifo`)
//!
//! - **Groups**: a message published to a FIFO queue belongs to its
//!   `group_id`, or to [`DEFAULT_GROUP`](crate::DEFAULT_GROUP) when it has
//!   none. Priority is stored as 0 and ignored. On a standard queue the group
//!   is stored and has no effect.
//! - **Head**: a group's head is its lowest-`seq` message the queue still
//!   holds, whatever its state. A claim hands out only heads, and a head
//!   only while it is `available` (not in flight, not delayed into the
//!   future). So within a group messages go out strictly in publish order
//!   and at most one is in flight: an in-flight head, or one nacked with a
//!   delay, or published with a delay, blocks its group until it is acked,
//!   dead-lettered or purged (or, for a delay, until it is due). A nack with
//!   requeue and a lease expiry keep the `seq`: the same message stays the
//!   head and comes back first.
//! - **Groups in parallel**: one claim returns the heads of up to `max`
//!   groups, oldest first by `seq`.
//! - **Publish order** is `seq` order, and within a group `seq` order is
//!   commit order: publishes to one group are serialised (on PostgreSQL by a
//!   per-group advisory lock; SQLite has a single writer). A publish that
//!   returned before another began is ahead of it; of two concurrent
//!   publishes to one group, one is ahead, in the order they committed.
//! - **Redrive** into a FIFO queue appends each dead letter at its group's
//!   tail (a fresh `seq`, oldest dead letter first), as a new publish would,
//!   with `delivery_count` 0; a dead letter without a group joins the default
//!   group.
//! - **Dead-letter queues are standard**: the default `<name>-dlq` of a FIFO
//!   queue is created standard, and naming a FIFO queue as a dead-letter
//!   queue (explicitly, or an existing `<name>-dlq`) is `Invalid`.
//! - **Dedupe** works as on standard queues.
/// The storage seam: every operation the server needs, each with one
/// params struct (see the module docs for the semantics).
#[async_trait::async_trait]
pub trait Store: Send + Sync + 'static {
    /// `"postgres"` or `"sqlite"`, for logs.
    fn backend(&self) -> &'static str;

    /// One cheap round trip to the database (readiness checks). The default
    /// lists the queues of a project that cannot exist.
    async fn ping(&self) -> crate::Result<()> {
        self.queue_list("").await.map(|_| ())
    }

    // ------------------------------------------------------------ keys

    /// Stores a key's hash, creating its project if needed.
    async fn key_insert(&self, p: crate::KeyInsert) -> crate::Result<crate::KeyRecord>;
    /// The non-revoked key with this hash.
    async fn key_lookup(&self, key_hash: &[u8]) -> crate::Result<Option<crate::KeyRecord>>;
    /// Every key, revoked ones included, oldest first.
    async fn key_list(&self) -> crate::Result<Vec<crate::KeyRecord>>;
    /// Revokes a key; false if no such non-revoked key.
    async fn key_revoke(&self, key_id: &str, now: jiff::Timestamp) -> crate::Result<bool>;
    /// The key with this public id, revoked or not.
    async fn key_get(&self, key_id: &str) -> crate::Result<Option<crate::KeyRecord>>;
    /// Sets (or clears) when a non-revoked key expires; false if no such key.
    async fn key_set_expiry(
        &self,
        key_id: &str,
        expires_at: Option<jiff::Timestamp>,
    ) -> crate::Result<bool>;
    /// Sets (or clears) a non-revoked key's own rate limit; false if no
    /// such key.
    async fn key_set_rate(
        &self,
        key_id: &str,
        rate: Option<crate::RateLimit>,
    ) -> crate::Result<bool>;

    // ------------------------------------------------------------ accounts

    /// Every project, by name, with its account settings.
    async fn project_list(&self) -> crate::Result<Vec<crate::ProjectRecord>>;
    /// One project.
    async fn project_get(&self, name: &str) -> crate::Result<Option<crate::ProjectRecord>>;
    /// Sets (or clears) a project's credit limit; false if no such project.
    async fn project_set_credit(
        &self,
        name: &str,
        limit_micros: Option<u64>,
    ) -> crate::Result<bool>;
    /// Sets (or clears) a project's rate limit; false if no such project.
    async fn project_set_rate(
        &self,
        name: &str,
        rate: Option<crate::RateLimit>,
    ) -> crate::Result<bool>;
    /// Adds usage buckets (each `(project, capability, minute)` at most
    /// once per call) and their cost to the projects' spend, atomically.
    async fn usage_flush(&self, rows: Vec<crate::UsageRow>) -> crate::Result<()>;
    /// A project's usage per capability over a range, by capability id.
    async fn usage_query(&self, q: crate::UsageQuery) -> crate::Result<Vec<crate::UsageTotal>>;
    /// Records that a server is alive; returns how many are (see
    /// [`ServerHeartbeat`](crate::ServerHeartbeat)).
    async fn server_heartbeat(&self, p: crate::ServerHeartbeat) -> crate::Result<u32>;
    /// Forgets a server that is shutting down.
    async fn server_leave(&self, server_id: &str) -> crate::Result<()>;

    // ------------------------------------------------------------ queues

    /// Creates a queue; identical settings return the existing one
    /// (`created: false`), different ones are `QueueAlreadyExists`. An explicit
    /// DLQ must exist (`DeadLetterQueueNotFound`); the default `<name>-dlq`
    /// is created (with no DLQ of its own) when missing. A DLQ equal to the
    /// queue itself is `Invalid`.
    async fn queue_create(&self, p: crate::QueueCreate) -> crate::Result<crate::QueueCreated>;
    /// Changes some settings of a queue and returns its record: the rules
    /// of a create for its dead-letter queue (`DeadLetterQueueNotFound`,
    /// `Invalid`), and never its type (`Invalid`). `QueueNotFound` for an
    /// unknown queue. Later claims, nacks and lease expiries read the new
    /// settings; leases already granted keep their end.
    async fn queue_update(&self, p: crate::QueueUpdate) -> crate::Result<onceq_types::QueueRecord>;
    /// Pauses (`paused: true`) or resumes a queue and returns its record;
    /// `QueueNotFound` for an unknown queue. While paused, publishes are
    /// stored as usual, claims hand out nothing (so push delivery, which
    /// claims, stops too) and `subscription_scan` reports no subscription of
    /// the queue due; leases already granted run on (ack, nack, extend and
    /// lease expiry work as ever). Pausing a paused queue changes nothing.
    async fn queue_pause(&self, p: crate::QueuePause) -> crate::Result<onceq_types::QueueRecord>;
    /// One queue.
    async fn queue_get(
        &self,
        q: &crate::QueueRef,
    ) -> crate::Result<Option<onceq_types::QueueRecord>>;
    /// The project's queues, by name.
    async fn queue_list(&self, project: &str) -> crate::Result<Vec<onceq_types::QueueRecord>>;
    /// Deletes a queue, its messages and its dedupe keys; queues using it as
    /// DLQ are left without one. Returns the messages deleted.
    async fn queue_delete(&self, q: &crate::QueueRef) -> crate::Result<i64>;
    /// Counts by state (see `onceq_types::QueueStats`).
    async fn queue_stats(
        &self,
        q: &crate::QueueRef,
        now: jiff::Timestamp,
    ) -> crate::Result<onceq_types::QueueStats>;
    /// Deletes every message the queue holds, in flight ones included.
    async fn queue_purge(&self, q: &crate::QueueRef) -> crate::Result<i64>;

    // ------------------------------------------------------------ messages

    /// Stores messages all-or-nothing (see the dedupe rules above).
    async fn message_publish(
        &self,
        p: crate::MessagePublish,
    ) -> crate::Result<Vec<crate::PublishOutcome>>;
    /// [`Store::message_publish`] with `acks` in its transaction: the acks
    /// that consumers waiting here sent with their consume, carried by the
    /// publish that hands them messages (`HandOut`), so that an ack costs
    /// no commit of its own. Each ack is answered as by
    /// [`Store::message_ack_many`], apart from the publish's answer (see
    /// [`crate::PublishedAcking`]).
    async fn message_publish_acking(
        &self,
        p: crate::MessagePublish,
        acks: Vec<crate::MessageAck>,
    ) -> crate::PublishedAcking;
    /// Hands out up to `max` messages; `QueueNotFound` for an unknown queue.
    async fn message_claim(
        &self,
        p: crate::MessageClaim,
    ) -> crate::Result<Vec<crate::ClaimedMessage>>;
    /// Ends an in-flight message's lease as done: deletes it, or moves it
    /// to the queue's finished messages (`completed`, with `result`) while
    /// the queue retains them. Not acked when not held (or wrong receipt,
    /// or unknown queue or message).
    async fn message_ack(&self, p: crate::MessageAck) -> crate::Result<crate::AckOutcome>;
    /// Ends a lease early: requeue (maybe delayed), or dead-letter.
    async fn message_nack(&self, p: crate::MessageNack) -> crate::Result<crate::NackOutcome>;
    /// Returns a message stored handed out ([`crate::HandOut`]) whose
    /// consumer went away before it was answered: available again as if it
    /// had never been handed out (its delivery uncounted). False when that
    /// lease (`lease.receipt`, required) is no longer held.
    async fn message_hand_back(&self, lease: crate::LeaseRef) -> crate::Result<bool>;
    /// Moves a lease's end to `now + visibility_timeout`.
    async fn message_extend(&self, p: crate::MessageExtend) -> crate::Result<crate::ExtendOutcome>;
    /// Removes one message of the queue (not of its dead-letter queue),
    /// waiting, delayed or in flight (its lease ends: a later ack or extend
    /// with its receipt answers false; recorded as a `cancelled` attempt).
    /// Kept as `cancelled` while the queue keeps finished messages. False
    /// when the queue does not hold it; `QueueNotFound` for an unknown queue.
    async fn message_cancel(&self, p: crate::MessageCancel) -> crate::Result<bool>;
    /// Moves dead-lettered messages back, `delivery_count` reset to 0.
    /// `QueueNotFound` for an unknown queue, `Invalid` if it has no DLQ.
    async fn dlq_redrive(&self, p: crate::DlqRedrive) -> crate::Result<crate::RedriveOutcome>;

    // ------------------------------------------------------------ batches
    //
    // Each is one call and one transaction for up to `MAX_BATCH` entries,
    // answered entry by entry in the order given, each entry as its single
    // form would answer it alone; `Invalid` for no entries or too many.

    /// [`Store::message_ack`] for each entry. Entries that may keep their
    /// message (`rules::finished`) and those that may not go in one
    /// statement each.
    async fn message_ack_many(
        &self,
        acks: Vec<crate::MessageAck>,
    ) -> crate::Result<Vec<crate::AckOutcome>>;
    /// [`Store::message_ack_many`] then [`Store::message_claim`], in one
    /// transaction: a consume carrying its previous batch's acks. The claim
    /// sees the acks done (an in-flight limit counts them gone); one commit
    /// ends both, and a failure undoes both. The acks are of the claim's
    /// queue (`Invalid` otherwise, as for no acks or too many): of a queue
    /// that is not there (`QueueNotFound`) they had nothing to do.
    async fn message_ack_many_then_claim(
        &self,
        acks: Vec<crate::MessageAck>,
        claim: crate::MessageClaim,
    ) -> crate::Result<(Vec<crate::AckOutcome>, Vec<crate::ClaimedMessage>)>;
    /// [`Store::message_nack`] for each entry, in one transaction.
    async fn message_nack_many(
        &self,
        nacks: Vec<crate::MessageNack>,
    ) -> crate::Result<Vec<crate::NackOutcome>>;
    /// [`Store::message_cancel`] for each id, in one statement: `Done` or
    /// `NotFound`. `QueueNotFound` for an unknown queue.
    async fn message_cancel_many(
        &self,
        p: crate::MessageIds,
    ) -> crate::Result<Vec<crate::SingleOutcome>>;
    /// [`Store::message_delete`] for each id, in one transaction: `Done`,
    /// `InFlight` (left with its holder) or `NotFound`. `QueueNotFound`
    /// for an unknown queue.
    async fn message_delete_many(
        &self,
        p: crate::MessageIds,
    ) -> crate::Result<Vec<crate::SingleOutcome>>;
    /// [`Store::dlq_redrive_one`] for each id, in one transaction (one
    /// statement into a standard queue; into a FIFO queue, each at its
    /// group's tail in the order given). `QueueNotFound` for an unknown
    /// queue, `Invalid` if it has no DLQ.
    async fn dlq_redrive_many(
        &self,
        p: crate::MessageIds,
    ) -> crate::Result<crate::RedriveManyOutcome>;

    // ------------------------------------------------------------ browsing

    /// One page of a queue's messages, oldest first (see [`crate::MessageList`]).
    /// `QueueNotFound` for an unknown queue; `Invalid` for a limit outside
    /// 1..=[`crate::MAX_LIST_LIMIT`] or a `Gone` state filter. Walks the
    /// `(queue, seq)` index from the cursor; a search probes the id and
    /// `(queue, idempotency_key)` indexes, never the backlog.
    async fn message_list(&self, p: crate::MessageList) -> crate::Result<crate::MessagePage>;
    /// One message of a queue; `None` when the queue does not hold it.
    /// `QueueNotFound` for an unknown queue.
    async fn message_get(
        &self,
        p: crate::MessageGet,
    ) -> crate::Result<Option<crate::MessageRecord>>;
    /// One message of a queue or of its dead-letter queue (then
    /// `dead_lettered`), read in one statement so a message moving between
    /// the two is found in one of them. `QueueNotFound` for an unknown queue.
    async fn message_find(
        &self,
        p: crate::MessageGet,
    ) -> crate::Result<Option<crate::FoundMessage>>;
    /// One page of the finished messages the queue keeps (completed and
    /// cancelled), newest end first (see [`crate::FinishedList`]): a walk
    /// of the `(queue_id, finished_at, id)` index from the cursor, never
    /// the backlog. `QueueNotFound` for an unknown queue; `Invalid` for a
    /// limit outside 1..=[`crate::MAX_FINISHED_LIMIT`].
    async fn finished_list(&self, p: crate::FinishedList) -> crate::Result<crate::FinishedPage>;
    /// Deletes one message unless it is in flight. `QueueNotFound` for an
    /// unknown queue.
    async fn message_delete(&self, p: crate::MessageDelete) -> crate::Result<crate::SingleOutcome>;
    /// Moves one dead letter of the queue's DLQ back, exactly as
    /// [`Store::dlq_redrive`] moves each (FIFO: at its group's tail). An
    /// in-flight dead letter stays with its holder. `QueueNotFound` for an
    /// unknown queue, `Invalid` if it has no DLQ.
    async fn dlq_redrive_one(
        &self,
        p: crate::DlqRedriveOne,
    ) -> crate::Result<crate::RedriveOneOutcome>;

    /// Makes one delayed message of the queue available now, keeping its
    /// `seq` (see [`crate::MessagePromote`]): `NotDelayed` when it is
    /// available already or in flight. `QueueNotFound` for an unknown queue.
    async fn message_promote_now(
        &self,
        p: crate::MessagePromote,
    ) -> crate::Result<crate::PromoteOutcome>;
    /// The queue's newest `scan` messages whose payload contains a text
    /// (see [`crate::PayloadSearch`]): reads at most `scan` rows of the
    /// `(queue, seq)` index, never the backlog. `QueueNotFound` for an
    /// unknown queue; `Invalid` for bounds outside their range or no text.
    async fn message_payload_search(
        &self,
        p: crate::PayloadSearch,
    ) -> crate::Result<crate::PayloadMatches>;

    // ------------------------------------------------------------ push subscriptions

    /// Adds a push subscription to an existing queue (`QueueNotFound`
    /// otherwise); `Invalid` when the queue already has
    /// `onceq_types::push::MAX_SUBSCRIPTIONS_PER_QUEUE`. Deleting the queue
    /// deletes its subscriptions.
    async fn subscription_insert(
        &self,
        p: crate::SubscriptionInsert,
    ) -> crate::Result<crate::SubscriptionRecord>;
    /// The queue's subscriptions, oldest first; `QueueNotFound` for an
    /// unknown queue.
    async fn subscription_list(
        &self,
        q: &crate::QueueRef,
    ) -> crate::Result<Vec<crate::SubscriptionRecord>>;
    /// Deletes one subscription of the queue; false when the queue has no
    /// such subscription, `QueueNotFound` for an unknown queue.
    async fn subscription_delete(&self, p: crate::SubscriptionDelete) -> crate::Result<bool>;
    /// Every subscription of every project, oldest first, each with whether
    /// its queue has a message due at `now` (what the push dispatcher polls).
    async fn subscription_scan(
        &self,
        now: jiff::Timestamp,
    ) -> crate::Result<Vec<crate::SubscriptionDue>>;

    // ------------------------------------------------------------ cron

    /// Stores a schedule. With an idempotency key already used in the
    /// project, stores nothing and answers that schedule (`created: false`).
    async fn cron_insert(&self, p: crate::CronInsert) -> crate::Result<crate::CronInserted>;
    /// One schedule of a project, with its recent runs (newest first).
    async fn cron_get(&self, job: &crate::CronRef) -> crate::Result<Option<crate::CronRecord>>;
    /// The project's schedules, oldest first, without their runs.
    async fn cron_list(&self, project: &str) -> crate::Result<Vec<crate::CronRecord>>;
    /// Replaces a schedule's spec and next tick; `None` if no such schedule.
    async fn cron_update(&self, p: crate::CronUpdate) -> crate::Result<Option<crate::CronRecord>>;
    /// Pauses or resumes a schedule; `None` if no such schedule.
    async fn cron_pause(&self, p: crate::CronPause) -> crate::Result<Option<crate::CronRecord>>;
    /// Deletes a schedule and its runs; false if no such schedule.
    async fn cron_delete(&self, job: &crate::CronRef) -> crate::Result<bool>;
    /// The schedules of every project due at `now` (see [`crate::CronDue`]),
    /// at most `limit`, at most `per_project` of each project, handed out
    /// in turns across projects: every project's earliest due schedule
    /// (earliest first), then every project's second, and so on. So a
    /// project with one due schedule is in the first turn however many
    /// another has due.
    async fn cron_due(
        &self,
        now: jiff::Timestamp,
        limit: u32,
        per_project: u32,
    ) -> crate::Result<crate::CronDue>;
    /// Records a fired run and advances its schedule, in one transaction,
    /// only while the schedule's next tick is still the run's: true if this
    /// call advanced it. A second call for the same tick (another server,
    /// or this one after a crash) changes nothing and answers false.
    async fn cron_advance(&self, p: crate::CronAdvance) -> crate::Result<bool>;
    /// Sets how a run ended (a task's delivery), recording the run if its
    /// advance has not yet (see [`crate::CronRunOutcome`]); false if the
    /// schedule is gone.
    async fn cron_run_outcome(&self, p: crate::CronRunOutcome) -> crate::Result<bool>;
    // ------------------------------------------------------------ account webhooks

    /// Adds a webhook to a project; `Invalid` when the project already has
    /// `max_per_project`.
    async fn webhook_insert(&self, p: crate::WebhookInsert) -> crate::Result<crate::WebhookRecord>;
    /// The project's webhooks, oldest first.
    async fn webhook_list(&self, project: &str) -> crate::Result<Vec<crate::WebhookRecord>>;
    /// Deletes a webhook, its pending deliveries and its attempts; false
    /// when the project has no such webhook.
    async fn webhook_delete(&self, w: &crate::WebhookRef) -> crate::Result<bool>;
    /// Every webhook of every project, oldest first (what each server's
    /// "who listens to what" cache is refreshed from).
    async fn webhook_scan(&self) -> crate::Result<Vec<crate::WebhookRecord>>;
    /// Records an event: one pending delivery per listening webhook (see
    /// [`crate::WebhookEventInsert`]), in one statement; an event id
    /// recorded before adds nothing. Returns the deliveries made (with
    /// `attempt` 1 when claimed by the caller, else 0).
    async fn webhook_event_insert(
        &self,
        p: crate::WebhookEventInsert,
    ) -> crate::Result<Vec<crate::WebhookDelivery>>;
    /// Takes up to `limit` deliveries due at `now`, oldest due first, each
    /// held until `claim_until` and its attempt counted. Concurrent claims
    /// (several servers) never take the same delivery.
    async fn webhook_delivery_claim(
        &self,
        p: crate::WebhookDeliveryClaim,
    ) -> crate::Result<Vec<crate::WebhookDelivery>>;
    /// Records an attempt and reschedules or removes its delivery; false
    /// when the delivery is gone (its webhook was deleted).
    async fn webhook_delivery_settle(&self, p: crate::WebhookDeliverySettle)
    -> crate::Result<bool>;
    /// A webhook's latest attempts, newest first, at most `limit`; `None`
    /// when the project has no such webhook.
    async fn webhook_attempts(
        &self,
        w: &crate::WebhookRef,
        limit: u32,
    ) -> crate::Result<Option<Vec<crate::WebhookAttemptRecord>>>;
    // ------------------------------------------------------------ call ledger

    /// Claims an `Idempotency-Key` of a mutating call for one request, or
    /// says why not (the toolkit's ledger rules, `rules/ledger.rs`): a new
    /// key, one past its window, or an abandoned claim (lease over) of the
    /// same fingerprint is `Claimed`; of two concurrent claims of one free
    /// key exactly one is. Another fingerprint is `Mismatch` (even after an
    /// abandoned claim); a running lease `InFlight`; an answered one
    /// `Completed`.
    async fn ledger_claim(&self, p: crate::LedgerClaim)
    -> crate::Result<crate::LedgerClaimOutcome>;
    /// Records the answer of the claim named by its token; false when the
    /// entry no longer carries it (taken over, released, expired).
    async fn ledger_complete(&self, p: crate::LedgerComplete) -> crate::Result<bool>;
    /// Forgets the claim named by its token so a retry runs at once; false
    /// when the entry no longer carries it (or is already answered).
    async fn ledger_release(&self, p: crate::LedgerRelease) -> crate::Result<bool>;
    /// Deletes at most `limit` call-ledger entries whose window ended at or
    /// before `now` (call again while it returns `limit`).
    async fn ledger_purge(&self, now: jiff::Timestamp, limit: u32) -> crate::Result<u64>;
    /// What the call-ledger entries of `project` hold (`LedgerUsage`):
    /// its counters, one read whatever it keeps.
    async fn ledger_usage(&self, project: &str) -> crate::Result<crate::LedgerUsage>;
    /// When the first of `project`'s call-ledger entries still in their
    /// window at `now` ends (`None`: none is): a refused call's
    /// `Retry-After`. One index probe.
    async fn ledger_first_expiry(
        &self,
        project: &str,
        now: jiff::Timestamp,
    ) -> crate::Result<Option<jiff::Timestamp>>;
    /// Gives the space purges freed back to the file system, at most
    /// `max_pages` database pages a call; the bytes given back. The
    /// embedded store's file (`PRAGMA incremental_vacuum`); PostgreSQL
    /// reuses freed space itself (autovacuum) and answers 0.
    async fn space_reclaim(&self, max_pages: u32) -> crate::Result<u64>;

    // ------------------------------------------------------------ maintenance

    /// Ends up to `limit` leases that expired at or before `now`, in every
    /// project: back to the queue, or to the DLQ after the last hand-out.
    /// Reports the counts per queue as well as in total.
    async fn lease_expire(
        &self,
        now: jiff::Timestamp,
        limit: u32,
    ) -> crate::Result<crate::LeaseExpiry>;
    /// Forgets idempotency keys whose window ended at or before `now`.
    async fn dedupe_purge(&self, now: jiff::Timestamp) -> crate::Result<u64>;
    /// Deletes messages older than their queue's retention.
    async fn message_retention_purge(&self, now: jiff::Timestamp) -> crate::Result<u64>;
    /// Deletes up to `limit` finished messages whose time was up at or
    /// before `now`, through the expiry index (never the backlog).
    async fn finished_purge(&self, now: jiff::Timestamp, limit: u32) -> crate::Result<u64>;

    // ------------------------------------------------------------ observation

    /// Every queue of every project with its depth by state (`/metrics`),
    /// ordered by project then name, in one statement. Cheap by design:
    /// counts walk partial indexes (never the payloads), the oldest message
    /// is one index probe per queue; see `docs/metrics.md` for the cost.
    async fn queue_depths(&self, now: jiff::Timestamp) -> crate::Result<Vec<crate::QueueDepth>>;

    /// The connection pools' use right now. No I/O.
    fn pool_stats(&self) -> Vec<crate::PoolStats> {
        Vec::new()
    }
}
