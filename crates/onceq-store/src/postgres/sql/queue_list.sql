SELECT q.name, q.queue_type, d.name AS dead_letter_queue, q.max_retries,
       q.message_retention_days, q.visibility_timeout_default, q.enable_priority,
       q.created_at, q.completed_retention_seconds
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = $1
ORDER BY q.name COLLATE "C"
