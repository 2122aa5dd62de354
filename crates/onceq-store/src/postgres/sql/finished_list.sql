-- The newest page of a queue's kept finished messages (`finished_list`),
-- walking onceq_finished_queue_newest backward. $1 queue id, $2 rows.
-- The columns of message_find.sql's finished branch.
SELECT 0::bigint AS seq, f.id, f.payload, f.state,
       f.priority, f.group_id, f.idempotency_key, f.delivery_count,
       f.created_at, f.visible_at, NULL::timestamptz AS lease_expires_at, f.headers, f.last_error, f.attempts,
       false AS dead_lettered, f.finished_at, f.result, f.ended_lease, f.consumed_at
FROM onceq_finished f
WHERE f.queue_id = $1
ORDER BY f.finished_at DESC, f.id DESC
LIMIT $2
