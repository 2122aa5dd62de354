INSERT INTO onceq_queues (project, name, queue_type, dead_letter_queue_id, max_retries,
                          message_retention_days, visibility_timeout_default,
                          enable_priority, created_at, completed_retention_seconds)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
RETURNING id
