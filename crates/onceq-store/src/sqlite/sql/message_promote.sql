UPDATE onceq_messages
SET state = 'available'
WHERE queue_id = ?1 AND state = 'delayed' AND visible_at <= ?2
