SELECT q.id, q.name, q.queue_type, q.dead_letter_queue_id, d.name,
       q.max_retries, q.message_retention_days, q.visibility_timeout_default,
       q.enable_priority, q.created_at, q.paused,
       q.retry_backoff_initial_seconds, q.retry_backoff_multiplier,
       q.retry_backoff_max_seconds, q.retry_backoff_jitter,
       q.max_in_flight, q.rate_per_sec, q.rate_tokens, q.rate_refilled_at,
       q.completed_retention_seconds
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = ?1
ORDER BY q.name
