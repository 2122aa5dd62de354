-- An expired lease not yet reaped can still be acked: no one else holds it.
DELETE FROM onceq_messages
WHERE id = ?3
  AND state = 'in_flight'
  AND (?4 IS NULL OR receipt = ?4)
  AND queue_id = (SELECT id FROM onceq_queues WHERE project = ?1 AND name = ?2)
RETURNING consumed_at
