SELECT id, queue_type
FROM onceq_queues
WHERE project = $1 AND name = $2
