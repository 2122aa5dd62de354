SELECT key_id, project, label, created_at, revoked_at
FROM onceq_api_keys
ORDER BY created_at, key_id
