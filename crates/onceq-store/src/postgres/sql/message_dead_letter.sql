-- The row moves to the DLQ: same id, payload, delivery_count and history,
-- available there at once. $4 the history with this hand-out appended, $5
-- the last error (rules::attempts).
UPDATE onceq_messages
SET queue_id = $2, state = 'available', visible_at = $3, receipt = NULL, lease_expires_at = NULL,
    consumed_at = NULL, attempts = $4, last_error = $5
WHERE id = $1
