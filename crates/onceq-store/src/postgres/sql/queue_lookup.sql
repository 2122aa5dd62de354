SELECT id, enable_priority
FROM onceq_queues
WHERE project = $1 AND name = $2
