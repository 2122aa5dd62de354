-- The row moves to the DLQ ($2): same id, payload, delivery_count and
-- history, available there at once. $4 the history with this hand-out
-- appended, $5 the last error (rules::attempts). The DLQ's row is taken
-- KEY SHARE (migration V24): a DLQ deleted meanwhile moves nothing, and
-- the caller (which holds the message's lock) retries the nack.
UPDATE onceq_messages m
SET queue_id = d.id, state = 'available', visible_at = $3, receipt = NULL,
    lease_expires_at = NULL, consumed_at = NULL, attempts = $4, last_error = $5
FROM (SELECT id FROM onceq_queues WHERE id = $2 FOR KEY SHARE) d
WHERE m.id = $1
