-- The queue a redrive moves into, and its DLQ. The queue's row is taken
-- KEY SHARE (migration V24) until the redrive's transaction ends, so a
-- delete of the queue cannot pass the moves: one in progress is waited
-- for, and then the queue is not found.
SELECT q.id, q.queue_type, d.id AS dlq_id, d.name AS dlq_name
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = $1 AND q.name = $2
FOR KEY SHARE OF q
