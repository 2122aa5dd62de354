-- The whole batch in one statement, so it is stored all-or-nothing even
-- outside a transaction. The queue is joined rather than passed by id: no
-- row back means it does not exist, and the caller creates it and retries.
-- KEY SHARE on the queue row keeps a queue delete from passing the insert
-- (migration V24): a delete in progress is waited for, then the row is
-- gone and nothing is stored.
-- ORDER BY keeps the batch's order in `seq` (publish order).
-- $10 true: standard queues only (the lock-free path; no row back from a
-- FIFO queue, whose publishes take their groups' locks first). On a FIFO
-- queue a message without a group joins `default`, and priority is stored
-- as 0 (FIFO order ignores it).
INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at, headers)
SELECT n.id,
       q.id,
       CASE WHEN n.visible_at > $3 THEN 'delayed' ELSE 'available' END,
       n.payload,
       CASE WHEN q.enable_priority AND q.queue_type = 'standard' THEN n.priority ELSE 0 END,
       CASE WHEN q.queue_type = 'fifo' THEN coalesce(n.group_id, 'default') ELSE n.group_id END,
       n.idempotency_key,
       n.visible_at,
       $3,
       n.headers
FROM onceq_queues q
CROSS JOIN unnest($4::text[], $5::text[], $6::int4[], $7::text[], $8::text[], $9::timestamptz[],
                  $11::text[])
     WITH ORDINALITY AS n(id, payload, priority, group_id, idempotency_key, visible_at, headers,
                          ord)
WHERE q.project = $1 AND q.name = $2 AND (NOT $10::boolean OR q.queue_type = 'standard')
ORDER BY n.ord
FOR KEY SHARE OF q
RETURNING id, state, created_at, receipt, lease_expires_at
