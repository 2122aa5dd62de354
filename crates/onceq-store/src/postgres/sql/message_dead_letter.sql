-- The row moves to the DLQ: same id, payload and delivery_count, available
-- there at once.
UPDATE onceq_messages
SET queue_id = $2, state = 'available', visible_at = $3, receipt = NULL, lease_expires_at = NULL
WHERE id = $1
