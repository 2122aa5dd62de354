INSERT INTO onceq_api_keys (key_id, project, key_hash, label, created_at)
VALUES ($1, $2, $3, $4, $5)
RETURNING key_id, project, label, created_at, revoked_at
