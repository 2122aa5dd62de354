UPDATE onceq_api_keys
SET expires_at = ?2
WHERE key_id = ?1 AND revoked_at IS NULL
