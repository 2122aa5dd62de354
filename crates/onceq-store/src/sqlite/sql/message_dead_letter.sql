-- Moves the row: same id, payload and delivery_count, available in the DLQ.
UPDATE onceq_messages
SET queue_id = ?2, state = 'available', visible_at = ?3, receipt = NULL, lease_expires_at = NULL
WHERE seq = ?1
