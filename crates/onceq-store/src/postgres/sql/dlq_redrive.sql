-- Oldest first; at most $3 (NULL: all). In-flight messages stay: a consumer
-- of the DLQ holds them. A limit is an SQS-style partial redrive.
WITH picked AS (
    SELECT id
    FROM onceq_messages
    WHERE queue_id = $1 AND state <> 'in_flight'
    ORDER BY seq
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE onceq_messages m
SET queue_id = $2, state = 'available', visible_at = $4, delivery_count = 0
FROM picked
WHERE m.id = picked.id
