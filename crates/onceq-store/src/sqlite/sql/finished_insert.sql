INSERT INTO onceq_finished (id, queue_id, state, payload, priority, group_id, idempotency_key,
                            headers, delivery_count, created_at, visible_at, finished_at,
                            expires_at, result, last_error, attempts)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
