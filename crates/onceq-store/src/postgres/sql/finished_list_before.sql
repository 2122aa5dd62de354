-- A later page of a queue's kept finished messages (`finished_list`):
-- those older than the cursor, walking onceq_finished_queue_newest
-- backward from it. $1 queue id, $2 rows, $3 the cursor's
-- finished_at, $4 its id. A statement of its own (not "$3 IS NULL OR"),
-- so the cursor is an index condition, not a filter.
SELECT 0::bigint AS seq, f.id, f.payload, f.state,
       f.priority, f.group_id, f.idempotency_key, f.delivery_count,
       f.created_at, f.visible_at, NULL::timestamptz AS lease_expires_at, f.headers, f.last_error, f.attempts,
       false AS dead_lettered, f.finished_at, f.result, f.ended_lease, f.consumed_at
FROM onceq_finished f
WHERE f.queue_id = $1 AND (f.finished_at, f.id) < ($3, $4)
ORDER BY f.finished_at DESC, f.id DESC
LIMIT $2
