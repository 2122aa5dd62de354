-- One dead letter back to a standard queue, as dlq_redrive.sql moves each.
-- ?1 DLQ id, ?2 queue id, ?3 now, ?4 message id.
UPDATE onceq_messages
SET queue_id = ?2, state = 'available', delivery_count = 0, visible_at = ?3,
    receipt = NULL, lease_expires_at = NULL
WHERE id = ?4 AND queue_id = ?1 AND state IN ('available', 'delayed')
