-- The record names its dead-letter queue, so join it for its name.
SELECT q.name, q.queue_type, d.name AS dead_letter_queue, q.max_retries,
       q.message_retention_days, q.visibility_timeout_default, q.enable_priority,
       q.paused, q.created_at,
       q.retry_backoff_initial_seconds, q.retry_backoff_multiplier,
       q.retry_backoff_max_seconds, q.retry_backoff_jitter,
       q.max_in_flight, q.rate_per_sec,
       q.completed_retention_seconds
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = $1 AND q.name = $2
