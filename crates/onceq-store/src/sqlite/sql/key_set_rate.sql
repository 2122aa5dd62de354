UPDATE onceq_api_keys
SET rate_per_sec = ?2, rate_burst = ?3
WHERE key_id = ?1 AND revoked_at IS NULL
