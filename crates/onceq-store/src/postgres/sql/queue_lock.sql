-- Locking the queue row makes whatever puts messages into the queue (each
-- such statement takes KEY SHARE on the row, migration V24) wait until the
-- delete is decided, and the delete wait for those already holding it.
SELECT id
FROM onceq_queues
WHERE project = $1 AND name = $2
FOR UPDATE
