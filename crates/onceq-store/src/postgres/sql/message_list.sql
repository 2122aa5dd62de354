-- One page of a queue's messages in publish order, from the cursor on: a
-- range scan of onceq_messages_queue (queue_id, seq), never an OFFSET. A
-- state filter is checked row by row along that walk. A delayed message
-- whose time has come counts as available, as queue_stats counts it
-- (`rules::visibility::reported`).
-- $1 queue id, $2 cursor (the lowest bigint for the first page), $3 now,
-- $4 state or NULL, $5 limit, $6 message group or NULL (the planner may walk
-- onceq_messages_group (queue_id, group_id, seq) from V2 instead).
SELECT m.seq, m.id, m.payload,
       CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END AS state,
       m.priority, m.group_id, m.idempotency_key, m.delivery_count,
       m.created_at, m.visible_at, m.lease_expires_at, m.headers, m.last_error, m.attempts
FROM onceq_messages m
WHERE m.queue_id = $1 AND m.seq > $2
  AND ($4::text IS NULL
       OR CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END = $4)
  AND ($6::text IS NULL OR m.group_id = $6)
ORDER BY m.seq
LIMIT $5
