-- The queue a subscription is added to, locked against concurrent
-- subscribes so the per-queue limit holds. NO KEY UPDATE does not conflict
-- with the KEY SHARE locks that publishes take (migration V24).
SELECT id
FROM onceq_queues
WHERE project = $1 AND name = $2
FOR NO KEY UPDATE
