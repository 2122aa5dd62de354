SELECT q.id, q.queue_type, d.id AS dlq_id, d.name AS dlq_name
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
WHERE q.project = $1 AND q.name = $2
