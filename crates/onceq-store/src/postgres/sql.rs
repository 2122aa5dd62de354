//! Every statement the backend runs, one `.sql` file each under `sql/`,
//! named after what it does. Executed with `prepare_cached`, so each is
//! parsed and planned once per connection.

macro_rules! statements {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[doc = concat!("`sql/", $file, "`")]
            pub(super) const $name: &str = include_str!(concat!("sql/", $file));
        )*
    };
}

statements! {
    PROJECT_ENSURE => "project_ensure.sql",
    KEY_INSERT => "key_insert.sql",
    KEY_LOOKUP => "key_lookup.sql",
    KEY_LIST => "key_list.sql",
    KEY_REVOKE => "key_revoke.sql",
    QUEUE_GET => "queue_get.sql",
    QUEUE_LIST => "queue_list.sql",
    QUEUE_LOOKUP => "queue_lookup.sql",
    QUEUE_INSERT => "queue_insert.sql",
    QUEUE_LOCK => "queue_lock.sql",
    QUEUE_DELETE_MESSAGES => "queue_delete_messages.sql",
    QUEUE_DELETE => "queue_delete.sql",
    QUEUE_PURGE => "queue_purge.sql",
    QUEUE_STATS => "queue_stats.sql",
    QUEUE_DEPTHS => "queue_depths.sql",
    MESSAGE_INSERT => "message_insert.sql",
    DEDUPE_KEY_CLAIM => "dedupe_key_claim.sql",
    QUEUE_LOOKUP_MANY => "queue_lookup_many.sql",
    DEDUPE_KEY_CLAIM_MANY => "dedupe_key_claim_many.sql",
    DEDUPE_KEY_GET_MANY => "dedupe_key_get_many.sql",
    DEDUPE_KEY_RELEASE_MANY => "dedupe_key_release_many.sql",
    MESSAGE_INSERT_MANY => "message_insert_many.sql",
    MESSAGE_DELETE_MANY => "message_delete_many.sql",
    DEDUPE_KEY_GET => "dedupe_key_get.sql",
    MESSAGE_PROMOTE => "message_promote.sql",
    MESSAGE_CLAIM => "message_claim.sql",
    MESSAGE_CLAIM_FIFO => "message_claim_fifo.sql",
    FIFO_GROUP_LOCK => "fifo_group_lock.sql",
    MESSAGE_ACK => "message_ack.sql",
    MESSAGE_LOCK => "message_lock.sql",
    MESSAGE_REQUEUE => "message_requeue.sql",
    MESSAGE_DEAD_LETTER => "message_dead_letter.sql",
    MESSAGE_DELETE => "message_delete.sql",
    MESSAGE_EXTEND => "message_extend.sql",
    DLQ_REDRIVE_TARGET => "dlq_redrive_target.sql",
    DLQ_REDRIVE => "dlq_redrive.sql",
    DLQ_REDRIVE_PICK => "dlq_redrive_pick.sql",
    DLQ_REDRIVE_FIFO => "dlq_redrive_fifo.sql",
    MESSAGE_LIST => "message_list.sql",
    MESSAGE_SEARCH => "message_search.sql",
    MESSAGE_GET => "message_get.sql",
    MESSAGE_DELETE_ONE => "message_delete_one.sql",
    MESSAGE_STATE => "message_state.sql",
    DLQ_REDRIVE_ONE => "dlq_redrive_one.sql",
    DLQ_REDRIVE_ONE_PICK => "dlq_redrive_one_pick.sql",
    LEASE_EXPIRE => "lease_expire.sql",
    DEDUPE_PURGE => "dedupe_purge.sql",
    MESSAGE_RETENTION_PURGE => "message_retention_purge.sql",
    SUBSCRIPTION_QUEUE_LOCK => "subscription_queue_lock.sql",
    SUBSCRIPTION_COUNT => "subscription_count.sql",
    SUBSCRIPTION_INSERT => "subscription_insert.sql",
    SUBSCRIPTION_LIST => "subscription_list.sql",
    SUBSCRIPTION_DELETE => "subscription_delete.sql",
    SUBSCRIPTION_SCAN => "subscription_scan.sql",
}
