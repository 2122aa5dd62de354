SELECT key_id, project, label, created_at, revoked_at,
       actions, queue_patterns, expires_at, rate_per_sec, rate_burst
FROM onceq_api_keys
WHERE key_id = ?1
