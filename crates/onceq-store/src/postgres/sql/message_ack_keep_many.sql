-- message_ack_many.sql for a group of acks that may keep their messages
-- (rules::finished: receipts marked rcpt_k, or none), in one statement:
-- the same DELETE, and each deleted message of a queue that keeps finished
-- messages moved into onceq_finished as `completed`, with its ack's result
-- and time, its attempts as they were and the hand-out the ack ended
-- (`ended_lease`, `consumed_at`: its `acked` attempt is appended as the row
-- is read, rules::finished::closing_attempt). Returns what message_ack_many.sql
-- returns (id, receipt, consumed_at, project, queue), for the same matching
-- of deleted messages to acks.
-- $1 projects, $2 queues, $3 ids, $4 receipts, $5 'in_flight', $6 results,
-- $7 the acks' times.
WITH n AS (
    SELECT *
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $6::text[], $7::timestamptz[])
         AS n(project, queue, id, receipt, result, at)
), gone AS (
    DELETE FROM onceq_messages m
    WHERE m.id = ANY($3::text[])
      AND m.state = $5::text
      AND EXISTS (
          SELECT 1
          FROM n
          CROSS JOIN LATERAL (SELECT q.id FROM onceq_queues q
                              WHERE q.project = n.project AND q.name = n.queue
                              OFFSET 0) q
          WHERE n.id = m.id
            AND q.id = m.queue_id
            AND (n.receipt IS NULL OR n.receipt = m.receipt)
          OFFSET 0)
    RETURNING m.*
), kept AS (
    INSERT INTO onceq_finished (id, queue_id, state, payload, priority, group_id, idempotency_key,
                                headers, delivery_count, created_at, visible_at, finished_at,
                                expires_at, result, last_error, attempts, ended_lease, consumed_at)
    SELECT g.id, g.queue_id, 'completed', g.payload, g.priority, g.group_id, g.idempotency_key,
           g.headers, g.delivery_count, g.created_at, g.visible_at, a.at,
           a.at + make_interval(secs => q.completed_retention_seconds), a.result, g.last_error,
           g.attempts, true, g.consumed_at
    FROM gone g
    CROSS JOIN LATERAL (SELECT q.completed_retention_seconds FROM onceq_queues q
                        WHERE q.id = g.queue_id OFFSET 0) q
    -- the first ack of the group that could have deleted it
    CROSS JOIN LATERAL (SELECT n.result, n.at FROM n
                        WHERE n.id = g.id AND (n.receipt IS NULL OR n.receipt = g.receipt)
                        LIMIT 1) a
    WHERE q.completed_retention_seconds > 0
)
SELECT g.id, g.receipt, g.consumed_at,
       (SELECT q.project FROM onceq_queues q WHERE q.id = g.queue_id) AS project,
       (SELECT q.name FROM onceq_queues q WHERE q.id = g.queue_id) AS queue
FROM gone g
