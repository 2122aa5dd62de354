-- Redrive into a FIFO queue, step 1: the dead letters to move, oldest first.
-- In-flight messages of the DLQ stay with their holder. ?2 = -1: no limit.
SELECT seq
FROM onceq_messages
WHERE queue_id = ?1 AND state IN ('available', 'delayed')
ORDER BY seq
LIMIT ?2
