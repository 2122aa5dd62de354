-- `Store::dlq_redrive_many` into a FIFO queue, step 1: the named dead
-- letters, locked, oldest first, each with its state and the group it
-- joins (`default` for one that never had a group). Step 2 is
-- dlq_redrive_fifo.sql with those not in flight, under their groups' locks.
SELECT id, coalesce(group_id, 'default') AS group_id, state
FROM onceq_messages
WHERE queue_id = $1 AND id = ANY($2::text[])
ORDER BY seq
FOR UPDATE
