UPDATE onceq_api_keys
SET revoked_at = $2
WHERE key_id = $1 AND revoked_at IS NULL
