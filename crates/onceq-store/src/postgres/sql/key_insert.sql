INSERT INTO onceq_api_keys (key_id, project, key_hash, label, created_at, actions, queue_patterns, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING key_id, project, label, created_at, revoked_at,
          actions, queue_patterns, expires_at, rate_per_sec, rate_burst
