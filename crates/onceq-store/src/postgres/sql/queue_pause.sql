-- `Store::queue_pause`: pauses ($3 true) or resumes ($3 false) the queue
-- ($1, $2). A row back when it exists, changed or not (idempotent).
UPDATE onceq_queues
SET paused = $3
WHERE project = $1 AND name = $2
RETURNING id
