-- Older than the queue's retention, whatever the state. Hours, not days:
-- day arithmetic on timestamptz follows the session time zone's DST.
DELETE FROM onceq_messages m
USING onceq_queues q
WHERE m.queue_id = q.id
  AND m.created_at < $1::timestamptz - make_interval(hours => q.message_retention_days * 24)
