-- message_claim.sql for a plain queue: standard, without max_in_flight or
-- rate_per_sec, which is most queues. The same hand-out (highest priority
-- first, then publish order, SKIP LOCKED, the lease from $5 or $4 plus the
-- queue's default) with the same parameters and columns, but none of the
-- full statement's parts for FIFO heads, in-flight counts and token
-- buckets: every execution starts each of a plan's nodes, used or not, and
-- this plan is a third of the full one's (an empty claim costs PostgreSQL
-- 47 µs here against 95 µs; docs/performance.md, session 13).
--
-- The guard is in the statement: a queue that is not plain (or paused, or
-- missing) matches no row of `q`, so nothing is handed out, and claim/mod.rs,
-- told by the promotion in the same transaction that the queue is not
-- plain, claims again with the full statement. Nothing depends on claim/mod.rs
-- guessing right.
WITH q AS (
    SELECT id, visibility_timeout_default, completed_retention_seconds
    FROM onceq_queues
    WHERE project = $1 AND name = $2 AND NOT paused
      AND queue_type = 'standard' AND max_in_flight IS NULL AND rate_per_sec IS NULL
), picked AS (
    SELECT m.id
    FROM onceq_messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.state = 'available'
    ORDER BY m.priority DESC, m.seq
    LIMIT $3
    FOR UPDATE OF m SKIP LOCKED
)
UPDATE onceq_messages m
SET state = 'in_flight',
    delivery_count = m.delivery_count + 1,
    receipt = CASE WHEN (SELECT completed_retention_seconds FROM q) > 0 THEN 'rcpt_k' ELSE 'rcpt_' END
              || replace(gen_random_uuid()::text, '-', ''),
    lease_expires_at = coalesce(
        $5::timestamptz,
        $4::timestamptz + make_interval(secs => (SELECT visibility_timeout_default FROM q))
    ),
    consumed_at = $4::timestamptz
WHERE m.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING m.id, m.payload, m.delivery_count, m.receipt, m.created_at, m.lease_expires_at,
          m.idempotency_key, m.priority, m.seq, m.headers
