-- The in-flight message a lease names, with what ending its lease needs
-- (the same columns as lease_expire.sql: `Held::from_row`).
SELECT m.seq, m.delivery_count, q.max_retries, q.dead_letter_queue_id,
       q.retry_backoff_initial_seconds, q.retry_backoff_multiplier,
       q.retry_backoff_max_seconds, q.retry_backoff_jitter,
       m.consumed_at, m.lease_expires_at, m.attempts, m.last_error
FROM onceq_messages m
JOIN onceq_queues q ON q.id = m.queue_id
WHERE q.project = ?1 AND q.name = ?2 AND m.id = ?3
  AND m.state = 'in_flight'
  AND (?4 IS NULL OR m.receipt = ?4)
