-- Across every queue, earliest expiry first, via the partial index on leased
-- messages; bounded so one pass never holds many locks. SKIP LOCKED leaves a
-- lease being acked or nacked right now to that call.
-- The last allowed hand-out goes to the DLQ; a queue without one requeues:
-- the dead-letter rule, `rules::dead_letter::ending` with requeue = true
-- (src/rules/dead_letter.rs), decided here so that a pass is one statement.
-- A requeued message waits out its queue's retry backoff, if it has one,
-- `delayed`: `rules::backoff::retry_delay` (src/rules/backoff.rs) in SQL,
-- the same ln/exp form so no delivery count overflows, random() the draw;
-- held to the Rust rule by the conformance suite (tests/it/backoff.rs).
-- Each expiry is recorded as an attempt (`rules::attempts`: outcome
-- lease_expired, or dead_lettered for the last allowed hand-out, with
-- `lease_expired_error`'s text, spelled here too) and becomes the last error;
-- $3 is how many attempts are kept.
-- The DLQ's row is taken KEY SHARE (`d`, migration V24): a DLQ deleted
-- meanwhile gives none, and its expiry requeues as in a queue without one.
-- One row per source queue that had an expiry (the metrics count per queue).
WITH expired AS (
    SELECT id, queue_id,
           CASE WHEN consumed_at IS NULL
               THEN 'lease expired without ack or extend'
               ELSE format('lease expired after %s s without ack or extend',
                           greatest(0, floor(extract(epoch FROM lease_expires_at))::bigint
                                       - floor(extract(epoch FROM consumed_at))::bigint))
           END AS error
    FROM onceq_messages
    WHERE state = 'in_flight' AND lease_expires_at <= $1
    ORDER BY lease_expires_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), moved AS (
    UPDATE onceq_messages m
    SET queue_id = CASE
            WHEN d.id IS NOT NULL AND m.delivery_count >= q.max_retries + 1
            THEN d.id
            ELSE m.queue_id
        END,
        state = CASE
            WHEN q.retry_backoff_initial_seconds IS NOT NULL
                 AND NOT (d.id IS NOT NULL AND m.delivery_count >= q.max_retries + 1)
            THEN 'delayed' ELSE 'available'
        END,
        visible_at = CASE
            WHEN q.retry_backoff_initial_seconds IS NOT NULL
                 AND NOT (d.id IS NOT NULL AND m.delivery_count >= q.max_retries + 1)
            THEN $1 + make_interval(secs => round((
                exp(least(ln(q.retry_backoff_max_seconds),
                          ln(q.retry_backoff_initial_seconds)
                          + (greatest(m.delivery_count, 1) - 1) * ln(q.retry_backoff_multiplier)))
                * (1 - q.retry_backoff_jitter * random()))::numeric, 3)::double precision)
            ELSE $1
        END,
        receipt = NULL,
        lease_expires_at = NULL,
        consumed_at = NULL,
        last_error = e.error,
        attempts = onceq_attempts_append(m.attempts, jsonb_build_object(
            'delivery_count', m.delivery_count,
            'consumed_at', onceq_attempt_time(m.consumed_at),
            'ended_at', onceq_attempt_time($1),
            'outcome', CASE
                WHEN d.id IS NOT NULL AND m.delivery_count >= q.max_retries + 1
                THEN 'dead_lettered' ELSE 'lease_expired' END,
            'error', e.error), $3)
    FROM expired e
    JOIN onceq_queues q ON q.id = e.queue_id
    LEFT JOIN LATERAL (SELECT id FROM onceq_queues
                       WHERE id = q.dead_letter_queue_id
                       FOR KEY SHARE) d ON true
    WHERE m.id = e.id
    -- m is the new row here, q the queue it came from
    RETURNING q.project, q.name, m.queue_id <> q.id AS dead_lettered
)
SELECT project, name,
       count(*) FILTER (WHERE NOT dead_lettered) AS requeued,
       count(*) FILTER (WHERE dead_lettered) AS dead_lettered
FROM moved
GROUP BY project, name
