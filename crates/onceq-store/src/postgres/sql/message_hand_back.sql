-- A message stored handed out (publish_group.sql) whose consumer went
-- away before it was answered: available again as if never handed out (its
-- delivery uncounted, no lease, no consumed_at), only while that lease holds.
UPDATE onceq_messages m
SET state = 'available',
    delivery_count = m.delivery_count - 1,
    receipt = NULL,
    lease_expires_at = NULL,
    consumed_at = NULL
WHERE m.id = $3 AND m.receipt = $4 AND m.state = 'in_flight'
  AND m.queue_id = (SELECT q.id FROM onceq_queues q WHERE q.project = $1 AND q.name = $2)
