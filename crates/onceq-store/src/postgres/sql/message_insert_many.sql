-- message_insert.sql for a whole group of publishes, by queue id (the group
-- looked its queues up first). ORDER BY keeps each publish's order in `seq`.
-- A message with an idempotency key is stored only if this transaction took
-- the key for it (dedupe_key_claim_many.sql, sent just before in the same
-- pipeline): a key held by an earlier publish makes it a replay instead.
-- Per queue: a FIFO message without a group joins `default`, and priority
-- is stored only where the queue enables it (FIFO order ignores it).
INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at, headers)
SELECT n.id,
       q.id,
       CASE WHEN n.visible_at > n.created_at THEN 'delayed' ELSE 'available' END,
       n.payload,
       CASE WHEN q.enable_priority AND q.queue_type = 'standard' THEN n.priority ELSE 0 END,
       CASE WHEN q.queue_type = 'fifo' THEN coalesce(n.group_id, 'default') ELSE n.group_id END,
       n.idempotency_key,
       n.visible_at,
       n.created_at,
       n.headers
FROM unnest($1::text[], $2::int8[], $3::text[], $4::int4[], $5::text[], $6::text[],
            $7::timestamptz[], $8::timestamptz[], $9::text[])
     WITH ORDINALITY AS n(id, queue_id, payload, priority, group_id, idempotency_key,
                          visible_at, created_at, headers, ord)
-- A probe of the queues' primary key per message: this statement runs under
-- a generic plan (publish_group/mod.rs), which as a plain join hashes the
-- whole queues table on every group.
CROSS JOIN LATERAL (SELECT q.id, q.enable_priority, q.queue_type FROM onceq_queues q
                    WHERE q.id = n.queue_id OFFSET 0) q
WHERE n.idempotency_key IS NULL
   OR EXISTS (SELECT 1 FROM onceq_dedupe_keys k
              WHERE k.queue_id = n.queue_id AND k.key = n.idempotency_key
                AND k.message_id = n.id
              -- OFFSET 0 keeps this a probe of the primary key per message.
              -- Without it the planner may turn the EXISTS into a hashed
              -- subplan, which reads the WHOLE keys table on every group:
              -- measured, it made each group's insert cost grow with the
              -- number of keys held (0.27 -> 0.67 ms at 11 000 keys).
              OFFSET 0)
ORDER BY n.ord
RETURNING id, state, created_at
