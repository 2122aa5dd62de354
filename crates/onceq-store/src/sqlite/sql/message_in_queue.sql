-- A message of a queue whatever its state: what a refused nack or extend reports.
SELECT m.delivery_count, m.lease_expires_at
FROM onceq_messages m
JOIN onceq_queues q ON q.id = m.queue_id
WHERE q.project = ?1 AND q.name = ?2 AND m.id = ?3
