-- Locks one message with what a nack needs to decide where it goes.
SELECT m.state, m.receipt, m.delivery_count, q.max_retries, q.dead_letter_queue_id,
       q.retry_backoff_initial_seconds, q.retry_backoff_multiplier,
       q.retry_backoff_max_seconds, q.retry_backoff_jitter,
       m.consumed_at, m.last_error, m.attempts
FROM onceq_messages m
JOIN onceq_queues q ON q.id = m.queue_id
WHERE q.project = $1 AND q.name = $2 AND m.id = $3
FOR UPDATE OF m
