INSERT INTO onceq_api_keys (key_id, project, key_hash, label, created_at)
VALUES (?1, ?2, ?3, ?4, ?5)
