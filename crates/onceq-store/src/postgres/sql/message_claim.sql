-- Highest priority first, then publish order: exactly the partial index on
-- available messages. SKIP LOCKED passes over rows another claim is taking;
-- for rows changed since our snapshot, FOR UPDATE re-checks `state` on the
-- latest version, so a message is never handed to two consumers.
WITH picked AS (
    SELECT id
    FROM onceq_messages
    WHERE queue_id = $1 AND state = 'available'
    ORDER BY priority DESC, seq
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE onceq_messages m
SET state = 'in_flight',
    delivery_count = m.delivery_count + 1,
    -- same shape as ids::receipt(): rcpt_ + a v4 UUID in simple hex
    receipt = 'rcpt_' || replace(gen_random_uuid()::text, '-', ''),
    lease_expires_at = $3
-- The ids as one array value, so the primary key is probed for them
-- (joined, a generic plan made on an empty table walked the whole index).
WHERE m.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING m.id, m.payload, m.delivery_count, m.receipt, m.created_at, m.lease_expires_at,
          m.idempotency_key, m.priority, m.seq
