-- `Store::queue_update`: ?1 queue id; each NULL keeps its column
-- (?2 dead-letter queue id, ?3 max_retries, ?4 message_retention_days,
-- ?5 visibility_timeout_default, ?6 enable_priority, ?7 completed_retention_seconds).
UPDATE onceq_queues
SET dead_letter_queue_id = COALESCE(?2, dead_letter_queue_id),
    max_retries = COALESCE(?3, max_retries),
    message_retention_days = COALESCE(?4, message_retention_days),
    visibility_timeout_default = COALESCE(?5, visibility_timeout_default),
    enable_priority = COALESCE(?6, enable_priority),
    completed_retention_seconds = COALESCE(?7, completed_retention_seconds)
WHERE id = ?1
