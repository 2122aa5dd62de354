-- Redrive of one dead letter into a FIFO queue, step 1: lock it and name the
-- group it joins (`default` for one that never had a group). Step 2 is
-- dlq_redrive_fifo.sql with this one message, under its group's lock.
SELECT id, coalesce(group_id, 'default') AS group_id, state
FROM onceq_messages
WHERE id = $2 AND queue_id = $1
FOR UPDATE
