-- One dead letter back to a standard queue, as dlq_redrive.sql moves each.
-- $1 DLQ id, $2 queue id, $3 message id, $4 now.
UPDATE onceq_messages
SET queue_id = $2, state = 'available', visible_at = $4, delivery_count = 0
WHERE id = $3 AND queue_id = $1 AND state <> 'in_flight'
