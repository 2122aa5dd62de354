//! Every statement the backend runs, one `.sql` file each under `sql/`,
//! named after what it does, compiled in without its comment lines
//! (`build.rs` says why). Executed with `prepare_cached`, so each is
//! parsed once per connection; PostgreSQL then plans it per execution or
//! reuses a generic plan, as it judges; hot statements run under
//! [`HOT_BEGIN`]'s settings instead.

/// BEGIN and the settings for the hot statements, in one message: a claim's
/// transaction starts with it (pipelined with the rest, `claim/mod.rs`); a
/// committer (a group of publishes or acks) sets [`HOT_SESSION`] once on
/// its own connection instead (see `hot.rs`).
///
/// Every hot statement finds its rows by key: a message by id, a key by
/// (queue, key), a queue's next messages by the partial index. Planned with
/// the tables' statistics, PostgreSQL may pick otherwise, and keep it:
///
/// - The group statements take arrays, whose length a generic plan cannot
///   know, so under the default (`auto`) the message insert was planned
///   afresh on every group: 0.26 ms per group, more than its own run
///   (measured with `pg_stat_statements.track_planning`).
/// - A plan made while a table is empty (a fresh database, a drained queue
///   after vacuum truncated it) scans it: reading no pages costs nothing.
///   Under `auto` a statement soon settles on its generic plan, and keeps it
///   until the table is next vacuumed or analyzed, however big it has grown
///   by then: a claim or an insert reading the whole backlog.
///
/// So these statements use generic plans (planned once per connection)
/// with sequential scans, hash and merge joins priced out: what is left is a
/// nested loop of index probes, whatever the statistics said. That alone
/// still let a plan walk a whole index, so the statements themselves reach
/// every table through a probe: `LATERAL (... OFFSET 0)` joins, updates and
/// deletes `WHERE id = ANY(...)` of the ids found, and a parameter where a
/// literal would let a partial index be walked.
/// JIT is off for them: a generic plan's cost is estimated without the
/// parameters, and beside a big backlog that estimate passed
/// `jit_above_cost`, so a claim that touches ten rows compiled itself with
/// LLVM on every execution: 2.4 s per claim beside 1 000 000 waiting
/// messages (docs/performance.md, change 10).
/// Other statements (purges, the dashboard) plan as usual, with JIT off
/// for the session (`pool.rs`): `SET LOCAL` ends with its transaction, and
/// a committer's connection never serves anything else. One more runs under
/// these settings: a queue's stats (`sql/queue_stats.sql` says why). A test
/// checks every hot statement's plan on empty and on full tables.
pub(super) const HOT_BEGIN: &str = concat!("BEGIN; ", hot_settings!("SET LOCAL"));

/// The hot statements: those run per message, under [`HOT_BEGIN`]'s
/// settings (a committer's group, a claim and the acks it carries) or on
/// every keyed call, by name. A test checks their plans
/// (`tests/plans.rs`); behind a pooler they run as functions, which keep
/// their plans on the server connection (`hot_functions.rs`).
pub(super) const HOT: &[(&str, &str)] = &[
    ("queue_lookup_many", QUEUE_LOOKUP_MANY),
    ("publish_group", PUBLISH_GROUP),
    ("dedupe_key_get_many", DEDUPE_KEY_GET_MANY),
    ("dedupe_key_release_many", DEDUPE_KEY_RELEASE_MANY),
    ("message_delete_many", MESSAGE_DELETE_MANY),
    ("fifo_group_lock", FIFO_GROUP_LOCK),
    ("message_ack_many", MESSAGE_ACK_MANY),
    ("message_ack_keep_many", MESSAGE_ACK_KEEP_MANY),
    ("message_promote", MESSAGE_PROMOTE),
    ("message_claim", MESSAGE_CLAIM),
    ("message_claim_plain", MESSAGE_CLAIM_PLAIN),
    // A keyed call's bound check, and a refusal's Retry-After.
    ("ledger_usage", LEDGER_USAGE),
    ("ledger_first_expiry", LEDGER_FIRST_EXPIRY),
];

/// [`HOT_BEGIN`]'s settings for a whole session.
pub(super) const HOT_SESSION: &str = hot_settings!("SET", "; ");

/// [`HOT_BEGIN`]'s settings as a function's own (`SET` clauses of `CREATE
/// FUNCTION`), in force for each call whatever the transaction set
/// (`hot_functions.rs`).
pub(super) const HOT_FUNCTION_SETTINGS: &str = hot_settings!("SET", " ");

macro_rules! hot_settings {
    ($set:literal) => {
        hot_settings!($set, "; ")
    };
    ($set:literal, $then:literal) => {
        concat!(
            $set,
            " plan_cache_mode = force_generic_plan",
            $then,
            $set,
            " enable_seqscan = off",
            $then,
            $set,
            " enable_hashjoin = off",
            $then,
            $set,
            " enable_mergejoin = off",
            $then,
            $set,
            " jit = off"
        )
    };
}
use hot_settings;

macro_rules! statements {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[doc = concat!("`sql/", $file, "`")]
            pub(super) const $name: &str = include_str!(concat!(env!("OUT_DIR"), "/onceq-store/src/postgres/sql/", $file));
        )*
        /// Every statement above: behind a pooler their parameter types are
        /// learnt at start (`db.rs`).
        pub(super) const ALL: &[&str] = &[$($name),*];
    };
}

statements! {
    PROJECT_ENSURE => "project_ensure.sql",
    KEY_INSERT => "key_insert.sql",
    KEY_LOOKUP => "key_lookup.sql",
    KEY_LIST => "key_list.sql",
    KEY_REVOKE => "key_revoke.sql",
    KEY_GET => "key_get.sql",
    KEY_SET_EXPIRY => "key_set_expiry.sql",
    KEY_SET_RATE => "key_set_rate.sql",
    KEY_CHANGES => "key_changes.sql",
    PROJECT_LIST => "project_list.sql",
    PROJECT_GET => "project_get.sql",
    PROJECT_SET_CREDIT => "project_set_credit.sql",
    PROJECT_SET_RATE => "project_set_rate.sql",
    USAGE_FLUSH => "usage_flush.sql",
    USAGE_QUERY => "usage_query.sql",
    SERVER_HEARTBEAT => "server_heartbeat.sql",
    SERVER_LEAVE => "server_leave.sql",
    QUEUE_GET => "queue_get.sql",
    QUEUE_LIST => "queue_list.sql",
    QUEUE_LOOKUP => "queue_lookup.sql",
    QUEUE_INSERT => "queue_insert.sql",
    QUEUE_UPDATE => "queue_update.sql",
    QUEUE_PAUSE => "queue_pause.sql",
    QUEUE_LOCK => "queue_lock.sql",
    QUEUE_DELETE_MESSAGES => "queue_delete_messages.sql",
    QUEUE_DELETE => "queue_delete.sql",
    QUEUE_PURGE => "queue_purge.sql",
    QUEUE_STATS => "queue_stats.sql",
    QUEUE_DEPTHS => "queue_depths.sql",
    MESSAGE_INSERT => "message_insert.sql",
    DEDUPE_KEY_CLAIM => "dedupe_key_claim.sql",
    QUEUE_LOOKUP_MANY => "queue_lookup_many.sql",
    DEDUPE_KEY_GET_MANY => "dedupe_key_get_many.sql",
    DEDUPE_KEY_RELEASE_MANY => "dedupe_key_release_many.sql",
    PUBLISH_GROUP => "publish_group.sql",
    MESSAGE_DELETE_MANY => "message_delete_many.sql",
    DEDUPE_KEY_GET => "dedupe_key_get.sql",
    MESSAGE_PROMOTE => "message_promote.sql",
    MESSAGE_CLAIM => "message_claim.sql",
    MESSAGE_CLAIM_PLAIN => "message_claim_plain.sql",
    FIFO_GROUP_LOCK => "fifo_group_lock.sql",
    MESSAGE_ACK => "message_ack.sql",
    MESSAGE_ACK_MANY => "message_ack_many.sql",
    MESSAGE_LOCK => "message_lock.sql",
    MESSAGE_REQUEUE => "message_requeue.sql",
    MESSAGE_DEAD_LETTER => "message_dead_letter.sql",
    MESSAGE_DELETE => "message_delete.sql",
    MESSAGE_EXTEND => "message_extend.sql",
    MESSAGE_HAND_BACK => "message_hand_back.sql",
    DLQ_REDRIVE_TARGET => "dlq_redrive_target.sql",
    DLQ_REDRIVE => "dlq_redrive.sql",
    DLQ_REDRIVE_PICK => "dlq_redrive_pick.sql",
    DLQ_REDRIVE_FIFO => "dlq_redrive_fifo.sql",
    MESSAGE_LIST => "message_list.sql",
    MESSAGE_SEARCH => "message_search.sql",
    MESSAGE_GET => "message_get.sql",
    MESSAGE_FIND => "message_find.sql",
    MESSAGE_ACK_KEEP => "message_ack_keep.sql",
    MESSAGE_ACK_KEEP_MANY => "message_ack_keep_many.sql",
    MESSAGE_CANCEL_IDS => "message_cancel_ids.sql",
    MESSAGE_DELETE_IDS => "message_delete_ids.sql",
    DLQ_REDRIVE_IDS => "dlq_redrive_ids.sql",
    DLQ_REDRIVE_IDS_PICK => "dlq_redrive_ids_pick.sql",
    FINISHED_PURGE => "finished_purge.sql",
    FINISHED_LIST => "finished_list.sql",
    FINISHED_LIST_BEFORE => "finished_list_before.sql",
    MESSAGE_STATE => "message_state.sql",
    MESSAGE_PROMOTE_NOW => "message_promote_now.sql",
    MESSAGE_PAYLOAD_SEARCH => "message_payload_search.sql",
    MESSAGE_RECENT_COUNT => "message_recent_count.sql",
    LEASE_EXPIRE => "lease_expire.sql",
    DEDUPE_PURGE => "dedupe_purge.sql",
    MESSAGE_RETENTION_PURGE => "message_retention_purge.sql",
    SUBSCRIPTION_QUEUE_LOCK => "subscription_queue_lock.sql",
    SUBSCRIPTION_COUNT => "subscription_count.sql",
    SUBSCRIPTION_INSERT => "subscription_insert.sql",
    SUBSCRIPTION_LIST => "subscription_list.sql",
    SUBSCRIPTION_DELETE => "subscription_delete.sql",
    SUBSCRIPTION_SCAN => "subscription_scan.sql",
    CRON_INSERT => "cron_insert.sql",
    CRON_LOCK => "cron_lock.sql",
    CRON_COUNT => "cron_count.sql",
    CRON_GET => "cron_get.sql",
    CRON_GET_BY_KEY => "cron_get_by_key.sql",
    CRON_LIST => "cron_list.sql",
    CRON_RUNS => "cron_runs.sql",
    CRON_UPDATE => "cron_update.sql",
    CRON_PAUSE => "cron_pause.sql",
    CRON_DELETE => "cron_delete.sql",
    CRON_DUE => "cron_due.sql",
    CRON_NEXT => "cron_next.sql",
    CRON_ADVANCE => "cron_advance.sql",
    CRON_RUN_INSERT => "cron_run_insert.sql",
    CRON_RUNS_TRIM => "cron_runs_trim.sql",
    CRON_RUN_OUTCOME => "cron_run_outcome.sql",
    WEBHOOK_LOCK => "webhook_lock.sql",
    WEBHOOK_COUNT => "webhook_count.sql",
    WEBHOOK_INSERT => "webhook_insert.sql",
    WEBHOOK_LIST => "webhook_list.sql",
    WEBHOOK_SCAN => "webhook_scan.sql",
    WEBHOOK_DELETE => "webhook_delete.sql",
    WEBHOOK_EXISTS => "webhook_exists.sql",
    WEBHOOK_EVENT_INSERT => "webhook_event_insert.sql",
    WEBHOOK_DELIVERY_CLAIM => "webhook_delivery_claim.sql",
    WEBHOOK_DELIVERY_RETRY => "webhook_delivery_retry.sql",
    WEBHOOK_DELIVERY_DONE => "webhook_delivery_done.sql",
    WEBHOOK_ATTEMPT_INSERT => "webhook_attempt_insert.sql",
    WEBHOOK_ATTEMPT_PRUNE => "webhook_attempt_prune.sql",
    WEBHOOK_ATTEMPTS => "webhook_attempts.sql",
    // The shared request ledger's statements, the very files the toolkit
    // and the Node package run (crates/onceq/sql/ledger/postgres/).
    LEDGER_CLAIM => "../../../../onceq/sql/ledger/postgres/claim.sql",
    LEDGER_SELECT => "../../../../onceq/sql/ledger/postgres/select.sql",
    LEDGER_COMPLETE => "../../../../onceq/sql/ledger/postgres/complete.sql",
    LEDGER_RELEASE => "../../../../onceq/sql/ledger/postgres/release.sql",
    LEDGER_PURGE => "../../../../onceq/sql/ledger/postgres/purge.sql",
    // The server's own policy on it: per-project bounds (migration V19's
    // counters, and the index Retry-After probes).
    LEDGER_USAGE => "ledger_usage.sql",
    LEDGER_FIRST_EXPIRY => "ledger_first_expiry.sql",
    PING => "ping.sql",
}
