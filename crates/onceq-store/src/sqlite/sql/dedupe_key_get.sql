-- A key whose window has passed is treated as absent.
SELECT message_id, payload_hash, created_at
FROM onceq_dedupe_keys
WHERE queue_id = ?1 AND key = ?2 AND expires_at > ?3
