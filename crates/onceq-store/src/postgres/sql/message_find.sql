-- One message of a queue or of its dead-letter queue, or one the queue
-- keeps finished (onceq_finished), in one statement (one snapshot: a
-- message moving between them is seen in one). $1 queue id, $2 id, $3 now.
-- A finished row's `ended_lease` and `consumed_at`: migration V23.
-- A delayed message whose time has come counts as available
-- (`rules::visibility::reported`). Each branch is a primary-key probe.
SELECT m.seq, m.id, m.payload,
       CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END AS state,
       m.priority, m.group_id, m.idempotency_key, m.delivery_count,
       m.created_at, m.visible_at, m.lease_expires_at, m.headers, m.last_error, m.attempts,
       m.queue_id <> $1 AS dead_lettered,
       NULL::timestamptz AS finished_at, NULL::text AS result,
       false AS ended_lease, NULL::timestamptz AS consumed_at
FROM onceq_messages m
WHERE m.id = $2
  AND m.queue_id IN ($1, (SELECT q.dead_letter_queue_id FROM onceq_queues q WHERE q.id = $1))
UNION ALL
SELECT 0::bigint, f.id, f.payload, f.state,
       f.priority, f.group_id, f.idempotency_key, f.delivery_count,
       f.created_at, f.visible_at, NULL::timestamptz, f.headers, f.last_error, f.attempts,
       false, f.finished_at, f.result, f.ended_lease, f.consumed_at
FROM onceq_finished f
WHERE f.id = $2 AND f.queue_id = $1
