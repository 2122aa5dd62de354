-- A message of the queue being acked (?4: in flight, under receipt ?5 if
-- given) or cancelled (?4 NULL: whatever its state), with what moving it
-- into onceq_finished needs and the queue's completed retention.
SELECT m.seq, m.id, m.queue_id, m.state, m.payload, m.priority, m.group_id,
       m.idempotency_key, m.headers, m.delivery_count, m.created_at, m.visible_at,
       m.consumed_at, m.last_error, m.attempts, q.completed_retention_seconds
FROM onceq_messages m
JOIN onceq_queues q ON q.id = m.queue_id
WHERE q.project = ?1 AND q.name = ?2 AND m.id = ?3
  AND (?4 IS NULL OR m.state = ?4)
  AND (?5 IS NULL OR m.receipt = ?5)
