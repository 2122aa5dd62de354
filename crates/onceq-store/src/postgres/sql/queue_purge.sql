-- No row at all means no such queue; a row with 0 means it was empty.
-- Dedupe keys stay: a key outlives its message. The finished messages the
-- queue kept go too (a data-modifying CTE runs whether read or not).
WITH q AS (
    SELECT id FROM onceq_queues WHERE project = $1 AND name = $2
), purged AS (
    DELETE FROM onceq_messages m
    USING q
    WHERE m.queue_id = q.id
    RETURNING 1
), finished AS (
    DELETE FROM onceq_finished f
    USING q
    WHERE f.queue_id = q.id
)
SELECT (SELECT count(*) FROM purged) AS purged
FROM q
