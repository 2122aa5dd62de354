SELECT key_id, project, label, created_at, revoked_at
FROM onceq_api_keys
WHERE key_hash = ?1 AND revoked_at IS NULL
