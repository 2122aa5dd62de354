-- An ack that may keep its message (rules::finished: a receipt marked
-- rcpt_k, or none): message_ack.sql's DELETE, and in the same statement
-- the row moved into onceq_finished as `completed` with the ack's result
-- and the hand-out it ended (its `acked` attempt appended as the row is
-- read, as in message_ack_keep_many.sql), while the queue keeps finished
-- messages. $1 project, $2 queue, $3 id, $4 receipt or NULL, $5 now, $6
-- result or NULL.
WITH q AS (
    SELECT id, completed_retention_seconds AS keep_secs
    FROM onceq_queues
    WHERE project = $1 AND name = $2
), gone AS (
    DELETE FROM onceq_messages m
    USING q
    WHERE m.queue_id = q.id
      AND m.id = $3
      AND m.state = 'in_flight'
      AND ($4::text IS NULL OR m.receipt = $4)
    RETURNING m.*, q.keep_secs
), kept AS (
    INSERT INTO onceq_finished (id, queue_id, state, payload, priority, group_id, idempotency_key,
                                headers, delivery_count, created_at, visible_at, finished_at,
                                expires_at, result, last_error, attempts, ended_lease, consumed_at)
    SELECT id, queue_id, 'completed', payload, priority, group_id, idempotency_key,
           headers, delivery_count, created_at, visible_at, $5::timestamptz,
           $5::timestamptz + make_interval(secs => keep_secs), $6::text, last_error,
           attempts, true, consumed_at
    FROM gone
    WHERE keep_secs > 0
)
SELECT consumed_at FROM gone
