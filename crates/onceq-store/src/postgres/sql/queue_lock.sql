-- Locking the queue row makes concurrent publishes (their foreign-key checks
-- take KEY SHARE on it) wait until the delete is decided.
SELECT id
FROM onceq_queues
WHERE project = $1 AND name = $2
FOR UPDATE
