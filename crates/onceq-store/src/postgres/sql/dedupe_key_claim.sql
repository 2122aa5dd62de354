-- Takes the key for this publish: a new key, or one whose window has passed
-- (an expired key counts as absent). A row back means we own it. A
-- concurrent publish of the same key blocks here on the primary key until
-- the first commits, then conflicts and gets no row: one message per key.
INSERT INTO onceq_dedupe_keys (queue_id, key, message_id, payload_hash, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (queue_id, key) DO UPDATE
SET message_id = EXCLUDED.message_id,
    payload_hash = EXCLUDED.payload_hash,
    created_at = EXCLUDED.created_at,
    expires_at = EXCLUDED.expires_at
WHERE onceq_dedupe_keys.expires_at <= EXCLUDED.created_at
RETURNING message_id
