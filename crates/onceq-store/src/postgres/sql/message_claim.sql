-- Hands out up to $3 of the queue's next messages under a lease, in one
-- statement whatever the queue's type, so that a claim needs no answer
-- before it is sent: it goes in one pipeline with BEGIN, the promotion of
-- due messages (message_promote.sql) and COMMIT (claim/mod.rs). The lease ends
-- at $5, or when none is given at $4 plus the queue's default.
--
-- On a standard queue (`picked`): highest priority first, then publish
-- order, exactly the partial index on available messages. SKIP LOCKED
-- passes over rows another claim is taking; for rows changed since our
-- snapshot, FOR UPDATE re-checks `state` on the latest version, so a
-- message is never handed to two consumers.
--
-- On a FIFO queue (`picked_fifo`): only a group's head may go out, the group's lowest
-- seq still in the queue whatever its state, and only while it is
-- available. Heads of different groups go out together, oldest first
-- (priority is always 0 on a FIFO queue, so the ORDER BY is the partial
-- index on available messages and means seq order).
--
-- Why this never hands out two messages of a group at once, nor one out of
-- order, with many claimers and servers at READ COMMITTED:
--
-- 1. The statement reads one snapshot S. A candidate is available in S and
--    has no lower-seq message of its group in S (NOT EXISTS). The NOT EXISTS
--    reads S like any plain read: row locks do not hide rows from it. So in
--    one statement at most one message per group qualifies, the head in S.
-- 2. Nothing with a lower seq appears in a group after S: messages enter a
--    group only by publish or redrive, which take the group's advisory lock
--    (fifo_group_lock.sql) before they take their seq and hold it until
--    COMMIT, so within a group seq order is commit order; every message
--    committed after S has a higher seq than every message of the group
--    in S. (A FIFO queue is never a dead-letter queue, so nothing else
--    moves rows in.) Rows only leave a group (ack, dead-letter, purge,
--    retention) or change state in place (claim, nack, lease expiry keep
--    the seq). Hence the head in S is, if still in the queue, the head now.
-- 3. FOR UPDATE SKIP LOCKED on the head:
--    - locked by another transaction (a claimer taking it, or an ack, nack,
--      extend or the reaper working on it): skipped. The rest of its group
--      is not a candidate (1: the head is in S, locked or not), so the whole
--      group is skipped; no one can take the second message while the
--      first is being taken. This is why the head test is NOT EXISTS over
--      all states, not "the lowest available seq": a claimer that skipped a
--      locked head must not find the next message to be the lowest.
--    - changed and committed since S (claimed, acked, dead-lettered,
--      requeued): FOR UPDATE re-checks the WHERE on the newest version, so
--      a head now in flight or gone is dropped (and its group waits for the
--      next claim: conservative, never wrong). A requeued head is available
--      and still the head (2), so taking it is right.
-- 4. Under this, a message is handed out only as its group's head, only
--    while no lease on it exists; a later message of the group qualifies
--    only once every earlier one left the queue. So at most one message of
--    a group is in flight, and the group goes out in seq (publish) order.
--
-- Each pick is gated on the queue's type (a one-time filter on the value
-- of `q`): the other pick's scan never runs.
--
-- A paused queue (queue-api-2.md §6) leaves `q` empty, so neither pick
-- scans and nothing is handed out: no statement more, and the promotion
-- sent beside this one still tells the queue exists.
--
-- Limits (`rules::limits::allowance`, src/rules/limits.rs, repeated here):
-- `allowed` is $3 for a queue without them, read from `q` alone; a limited
-- queue (its row locked by the promotion before this statement) counts its
-- in-flight messages and refills its token bucket as of $4, and `spent`
-- stores the bucket less the messages taken. For a queue without a rate,
-- `spent` looks up no row: no write, no lock.
WITH q AS (
    SELECT id, queue_type, visibility_timeout_default, completed_retention_seconds,
           max_in_flight, rate_per_sec,
           -- the bucket as of $4 (`rules::limits::tokens_at`): NULL without a rate
           CASE WHEN rate_per_sec IS NOT NULL THEN
               least(greatest(rate_per_sec, 1),
                     coalesce(rate_tokens
                              + greatest(extract(epoch FROM $4::timestamptz - rate_refilled_at)::double precision, 0)
                                * rate_per_sec,
                              greatest(rate_per_sec, 1)))
           END AS tokens
    FROM onceq_queues
    WHERE project = $1 AND name = $2 AND NOT paused
), allowed AS (
    SELECT CASE
        WHEN max_in_flight IS NULL AND rate_per_sec IS NULL THEN $3
        ELSE greatest(0, least(
            $3,
            coalesce(max_in_flight - (
                SELECT count(*) FROM onceq_messages f
                WHERE f.state = 'in_flight' AND f.queue_id = q.id
            ), $3),
            coalesce(floor(tokens)::bigint, $3)
        ))
    END AS n
    FROM q
), picked AS (
    SELECT m.id
    FROM onceq_messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.state = 'available'
      AND (SELECT queue_type FROM q) = 'standard'
    ORDER BY m.priority DESC, m.seq
    LIMIT (SELECT n FROM allowed)
    FOR UPDATE OF m SKIP LOCKED
), picked_fifo AS (
    SELECT m.id
    FROM onceq_messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.state = 'available'
      AND (SELECT queue_type FROM q) = 'fifo'
      AND NOT EXISTS (
          SELECT 1
          FROM onceq_messages e
          WHERE e.queue_id = m.queue_id AND e.group_id = m.group_id AND e.seq < m.seq
          -- OFFSET 0 keeps this a probe of (queue_id, group_id, seq) per
          -- candidate. As an anti join, the generic plan walked all of the
          -- queue's grouped messages for every candidate.
          OFFSET 0
      )
    ORDER BY m.priority DESC, m.seq
    LIMIT (SELECT n FROM allowed)
    FOR UPDATE OF m SKIP LOCKED
), spent AS (
    UPDATE onceq_queues b
    SET rate_tokens = (SELECT tokens FROM q)
                      - (SELECT count(*) FROM picked) - (SELECT count(*) FROM picked_fifo),
        rate_refilled_at = $4
    -- NULL for a queue without a rate: the index is not even probed.
    WHERE b.id = (SELECT id FROM q WHERE q.rate_per_sec IS NOT NULL)
)
UPDATE onceq_messages m
SET state = 'in_flight',
    delivery_count = m.delivery_count + 1,
    -- same shape as rules::finished::receipt(): rcpt_ + a v4 UUID in
    -- simple hex, rcpt_k + the same while the queue keeps finished messages
    receipt = CASE WHEN (SELECT completed_retention_seconds FROM q) > 0 THEN 'rcpt_k' ELSE 'rcpt_' END
              || replace(gen_random_uuid()::text, '-', ''),
    lease_expires_at = coalesce(
        $5::timestamptz,
        $4::timestamptz + make_interval(secs => (SELECT visibility_timeout_default FROM q))
    ),
    -- when this lease began: its attempt's consumed_at (rules::attempts)
    consumed_at = $4::timestamptz
-- The ids as one array value, so the primary key is probed for them
-- (joined, a generic plan made on an empty table walked the whole index).
WHERE m.id = ANY (ARRAY(SELECT id FROM picked UNION ALL SELECT id FROM picked_fifo))
RETURNING m.id, m.payload, m.delivery_count, m.receipt, m.created_at, m.lease_expires_at,
          m.idempotency_key, m.priority, m.seq, m.headers
