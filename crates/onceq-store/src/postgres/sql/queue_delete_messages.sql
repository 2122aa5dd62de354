-- Explicit rather than ON DELETE CASCADE so that the count can be returned.
DELETE FROM onceq_messages
WHERE queue_id = $1
