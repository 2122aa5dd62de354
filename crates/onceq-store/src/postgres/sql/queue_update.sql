-- `Store::queue_update`: $1 queue id; each NULL keeps its column
-- ($2 dead-letter queue id, $3 max_retries, $4 message_retention_days,
-- $5 visibility_timeout_default, $6 enable_priority); the retry backoff
-- is replaced as a whole when $7 is true (by $8..$11, all NULL to remove it);
-- max_in_flight by $13 when $12, rate_per_sec by $15 when $14 (its bucket
-- then starts full); $16 completed_retention_seconds.
UPDATE onceq_queues
SET dead_letter_queue_id = COALESCE($2, dead_letter_queue_id),
    max_retries = COALESCE($3, max_retries),
    message_retention_days = COALESCE($4, message_retention_days),
    visibility_timeout_default = COALESCE($5, visibility_timeout_default),
    enable_priority = COALESCE($6, enable_priority),
    retry_backoff_initial_seconds = CASE WHEN $7 THEN $8 ELSE retry_backoff_initial_seconds END,
    retry_backoff_multiplier = CASE WHEN $7 THEN $9 ELSE retry_backoff_multiplier END,
    retry_backoff_max_seconds = CASE WHEN $7 THEN $10 ELSE retry_backoff_max_seconds END,
    retry_backoff_jitter = CASE WHEN $7 THEN $11 ELSE retry_backoff_jitter END,
    max_in_flight = CASE WHEN $12 THEN $13 ELSE max_in_flight END,
    rate_per_sec = CASE WHEN $14 THEN $15 ELSE rate_per_sec END,
    rate_tokens = CASE WHEN $14 THEN NULL ELSE rate_tokens END,
    rate_refilled_at = CASE WHEN $14 THEN NULL ELSE rate_refilled_at END,
    completed_retention_seconds = COALESCE($16, completed_retention_seconds)
WHERE id = $1
