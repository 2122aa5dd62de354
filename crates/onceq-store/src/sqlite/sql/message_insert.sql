INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at, headers)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
