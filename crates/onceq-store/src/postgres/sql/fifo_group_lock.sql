-- Serialises everything that adds messages to one group of a FIFO queue
-- (publish, redrive) until COMMIT: a message takes its seq while holding the
-- lock, so within a group seq order is commit order, and a claim never sees
-- a lower seq appear in a group after it looked (see message_claim.sql).
-- The two-key form keeps these apart from the single-key advisory locks
-- onceq uses elsewhere. A hash collision only makes two groups wait on each
-- other, never breaks the order.
SELECT pg_advisory_xact_lock(hashtext('onceq.fifo.' || $1::bigint::text), hashtext($2::text))
