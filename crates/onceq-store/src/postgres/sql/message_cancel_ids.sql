-- `Store::message_cancel_many` (and `message_cancel`, with one id): removes
-- the named messages of the queue (never of its dead-letter queue) whatever
-- their state, in one statement; an in-flight one's lease ends with it.
-- While the queue keeps finished messages each row moves into
-- onceq_finished as `cancelled`, an in-flight one's ended hand-out with it
-- (`ended_lease`: its `cancelled` attempt is appended as the row is read,
-- rules::finished::closing_attempt). $1 project, $2 queue, $3 ids, $4 now.
-- Returns whether the queue exists (`has_queue`) and the ids it held and
-- removed (`cancelled`).
WITH q AS (
    SELECT id, completed_retention_seconds AS keep_secs
    FROM onceq_queues
    WHERE project = $1 AND name = $2
), gone AS (
    DELETE FROM onceq_messages m
    USING q
    WHERE m.queue_id = q.id AND m.id = ANY($3::text[])
    RETURNING m.*, q.keep_secs
), kept AS (
    INSERT INTO onceq_finished (id, queue_id, state, payload, priority, group_id, idempotency_key,
                                headers, delivery_count, created_at, visible_at, finished_at,
                                expires_at, result, last_error, attempts, ended_lease, consumed_at)
    SELECT id, queue_id, 'cancelled', payload, priority, group_id, idempotency_key,
           headers, delivery_count, created_at, visible_at, $4::timestamptz,
           $4::timestamptz + make_interval(secs => keep_secs), NULL, last_error,
           attempts, state = 'in_flight', consumed_at
    FROM gone
    WHERE keep_secs > 0
)
SELECT EXISTS (SELECT 1 FROM q) AS has_queue, ARRAY(SELECT id FROM gone) AS cancelled
