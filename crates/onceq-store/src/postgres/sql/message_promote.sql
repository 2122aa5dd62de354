-- Finds the queue and, in the same statement, makes its due delayed messages
-- available, so that the claim that follows in the same transaction sees
-- them and delays end exactly on time. Bounded, and SKIP LOCKED: messages
-- another claim is promoting are that claim's. No row back: no such queue.
WITH q AS (
    SELECT id, visibility_timeout_default, queue_type
    FROM onceq_queues
    WHERE project = $1 AND name = $2
), due AS (
    SELECT m.id
    FROM onceq_messages m, q
    WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at <= $3
    ORDER BY m.visible_at
    LIMIT $4
    FOR UPDATE OF m SKIP LOCKED
), promoted AS (
    UPDATE onceq_messages m
    SET state = 'available'
    FROM due
    WHERE m.id = due.id
    RETURNING 1
)
SELECT q.id, q.visibility_timeout_default, q.queue_type, (SELECT count(*) FROM promoted) AS promoted
FROM q
