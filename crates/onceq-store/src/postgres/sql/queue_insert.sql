-- DO NOTHING instead of failing: a concurrent creator won, and the caller
-- reads its row (READ COMMITTED: the next statement sees it).
INSERT INTO onceq_queues (project, name, queue_type, dead_letter_queue_id, max_retries,
                          message_retention_days, visibility_timeout_default,
                          enable_priority, created_at, retry_backoff_initial_seconds,
                          retry_backoff_multiplier, retry_backoff_max_seconds,
                          retry_backoff_jitter, max_in_flight, rate_per_sec,
                          completed_retention_seconds)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (project, name) DO NOTHING
RETURNING id
