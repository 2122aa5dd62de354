-- One message of a queue, whatever its state. $1 queue id, $2 id, $3 now.
-- A delayed message whose time has come counts as available
-- (`rules::visibility::reported`).
SELECT m.seq, m.id, m.payload,
       CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END AS state,
       m.priority, m.group_id, m.idempotency_key, m.delivery_count,
       m.created_at, m.visible_at, m.lease_expires_at, m.headers, m.last_error, m.attempts
FROM onceq_messages m
WHERE m.id = $2 AND m.queue_id = $1
