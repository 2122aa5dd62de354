-- Redrive into a FIFO queue, step 1: the dead letters to move, oldest first,
-- locked (in-flight ones stay with their holder), and the group each joins
-- (`default` for one that never had a group).
SELECT id, coalesce(group_id, 'default') AS group_id
FROM onceq_messages
WHERE queue_id = $1 AND state <> 'in_flight'
ORDER BY seq
LIMIT $2
FOR UPDATE SKIP LOCKED
