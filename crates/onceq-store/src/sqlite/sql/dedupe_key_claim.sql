-- Replaces an expired key (the caller has checked it is expired or absent).
INSERT INTO onceq_dedupe_keys (queue_id, key, message_id, payload_hash, created_at, expires_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (queue_id, key) DO UPDATE
SET message_id = excluded.message_id,
    payload_hash = excluded.payload_hash,
    created_at = excluded.created_at,
    expires_at = excluded.expires_at
