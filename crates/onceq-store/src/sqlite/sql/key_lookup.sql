-- Revoked keys never authenticate; expiry is checked by the caller against
-- its own clock.
SELECT key_id, project, label, created_at, revoked_at,
       actions, queue_patterns, expires_at, rate_per_sec, rate_burst
FROM onceq_api_keys
WHERE key_hash = ?1 AND revoked_at IS NULL
