-- The whole batch in one statement, so it is stored all-or-nothing even
-- outside a transaction. The queue is joined rather than passed by id: no
-- row back means it does not exist, and the caller creates it and retries.
-- ORDER BY keeps the batch's order in `seq` (publish order).
INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at)
SELECT n.id,
       q.id,
       CASE WHEN n.visible_at > $3 THEN 'delayed' ELSE 'available' END,
       n.payload,
       CASE WHEN q.enable_priority THEN n.priority ELSE 0 END,
       n.group_id,
       n.idempotency_key,
       n.visible_at,
       $3
FROM onceq_queues q
CROSS JOIN unnest($4::text[], $5::text[], $6::int4[], $7::text[], $8::text[], $9::timestamptz[])
     WITH ORDINALITY AS n(id, payload, priority, group_id, idempotency_key, visible_at, ord)
WHERE q.project = $1 AND q.name = $2
ORDER BY n.ord
RETURNING id, state, created_at
