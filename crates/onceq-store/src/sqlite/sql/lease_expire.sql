-- Leases that ran out at or before ?1, in every project, soonest first,
-- with the queue each was on (the metrics count expiries per queue).
-- The first columns are message_held.sql's (`Held::from_row`).
SELECT m.seq, m.delivery_count, q.max_retries, q.dead_letter_queue_id,
       q.retry_backoff_initial_seconds, q.retry_backoff_multiplier,
       q.retry_backoff_max_seconds, q.retry_backoff_jitter,
       m.consumed_at, m.lease_expires_at, m.attempts, m.last_error,
       q.project, q.name
FROM onceq_messages m
JOIN onceq_queues q ON q.id = m.queue_id
WHERE m.state = 'in_flight' AND m.lease_expires_at <= ?1
ORDER BY m.lease_expires_at, m.seq
LIMIT ?2
