-- Finds the queue and, in the same statement, makes its due delayed messages
-- available, so that the claim sent right after it in the same transaction
-- (a statement of its own, so with a snapshot that sees them) takes them
-- and delays end exactly on time. Bounded, and SKIP LOCKED: messages
-- another claim is promoting are that claim's. No row back: no such queue.
--
-- A queue with a hand-out limit (max_in_flight, rate_per_sec) has its row
-- locked here (`limited`), until the claim's COMMIT: claims of a limited
-- queue take turns, and the claim statement, a statement of its own after
-- this one, counts in-flight messages and reads the token bucket in a
-- snapshot that sees every earlier claim. A queue without limits: no lock,
-- no probe, no statement more.
--
-- `plain` says whether message_claim_plain.sql can claim from it (a
-- standard queue without limits): claim/mod.rs sends that statement unless it
-- knows the queue is not plain, and claims again with the full one when
-- this says so.
WITH q AS (
    SELECT id, (max_in_flight IS NOT NULL OR rate_per_sec IS NOT NULL) AS limited,
           (queue_type = 'standard' AND max_in_flight IS NULL AND rate_per_sec IS NULL) AS plain
    FROM onceq_queues
    WHERE project = $1 AND name = $2
), due AS (
    -- The queue's id as a value (an InitPlan), not a join: the index is
    -- then probed on (queue_id, visible_at). Joined, a generic plan walked
    -- every queue's due messages by visible_at alone.
    SELECT m.id
    FROM onceq_messages m
    WHERE m.queue_id = (SELECT id FROM q) AND m.state = 'delayed' AND m.visible_at <= $3
    ORDER BY m.visible_at
    LIMIT $4
    FOR UPDATE OF m SKIP LOCKED
), promoted AS (
    -- The ids as one array value (an InitPlan), so the primary key is
    -- probed for them; joined, a generic plan made on an empty table walked
    -- the whole index.
    UPDATE onceq_messages m
    SET state = 'available'
    WHERE m.id = ANY (ARRAY(SELECT id FROM due))
    RETURNING 1
), limited AS (
    SELECT l.id
    FROM onceq_queues l
    -- NULL for a queue without limits: the index is not even probed.
    WHERE l.id = (SELECT id FROM q WHERE q.limited)
    FOR UPDATE
)
SELECT q.id, (SELECT count(*) FROM promoted) AS promoted,
       (SELECT count(*) FROM limited) AS limited, q.plain
FROM q
