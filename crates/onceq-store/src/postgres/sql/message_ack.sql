-- Only the current lease: in flight, and under the receipt if one is given.
DELETE FROM onceq_messages m
USING onceq_queues q
WHERE q.project = $1 AND q.name = $2 AND m.queue_id = q.id
  AND m.id = $3
  AND m.state = 'in_flight'
  AND ($4::text IS NULL OR m.receipt = $4)
RETURNING m.consumed_at
