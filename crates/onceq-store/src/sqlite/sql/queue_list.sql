SELECT q.id, q.name, q.queue_type, q.dead_letter_queue_id, d.name,
       q.max_retries, q.message_retention_days, q.visibility_timeout_default,
       q.enable_priority, q.created_at, q.completed_retention_seconds
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = ?1
ORDER BY q.name
