-- One delayed message whose time has not come becomes available now (the
-- dashboard's "Promote"): its delay ends at $3, its seq (its place in the
-- queue, and in its FIFO group) is kept. One probe of the primary key.
-- $1 queue id, $2 message id, $3 now.
UPDATE onceq_messages
SET state = 'available', visible_at = $3
WHERE id = $2 AND queue_id = $1 AND state = 'delayed' AND visible_at > $3
