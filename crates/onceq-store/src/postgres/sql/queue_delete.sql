-- After queue_lock.sql and queue_delete_messages.sql in the same
-- transaction: the queue's dedupe keys and kept finished messages, then
-- the queue. By hand, not by cascade (migration V22 dropped those foreign
-- keys from the hot inserts); this statement's snapshot is taken after the
-- queue's lock and its messages' delete, so it sees every key and finished
-- row committed before them. Subscriptions go by cascade; queues
-- dead-lettering into this one are left without a DLQ (ON DELETE SET NULL).
WITH keys AS (
    DELETE FROM onceq_dedupe_keys WHERE queue_id = $1
), finished AS (
    DELETE FROM onceq_finished WHERE queue_id = $1
)
DELETE FROM onceq_queues
WHERE id = $1
