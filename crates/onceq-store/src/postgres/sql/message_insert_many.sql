-- message_insert.sql for a whole group of publishes, by queue id (the group
-- looked its queues up first). ORDER BY keeps each publish's order in `seq`.
-- A message with an idempotency key is stored only if this transaction took
-- the key for it (dedupe_key_claim_many.sql, sent just before in the same
-- pipeline): a key held by an earlier publish makes it a replay instead.
-- Per queue: a FIFO message without a group joins `default`, and priority
-- is stored only where the queue enables it (FIFO order ignores it).
--
-- A message asked to be handed out ($10: a consumer waits for it) is stored
-- in flight under a lease when rules::hand_out::allowed says so (`h.handed`
-- below is that rule): its first delivery, as message_claim_plain.sql would
-- make it, with the lease from $11 or the queue's default.
INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at, headers,
                            delivery_count, receipt, lease_expires_at, consumed_at)
SELECT n.id,
       q.id,
       CASE WHEN h.handed THEN 'in_flight'
            WHEN n.visible_at > n.created_at THEN 'delayed' ELSE 'available' END,
       n.payload,
       CASE WHEN q.enable_priority AND q.queue_type = 'standard' THEN n.priority ELSE 0 END,
       CASE WHEN q.queue_type = 'fifo' THEN coalesce(n.group_id, 'default') ELSE n.group_id END,
       n.idempotency_key,
       n.visible_at,
       n.created_at,
       n.headers,
       CASE WHEN h.handed THEN 1 ELSE 0 END,
       CASE WHEN h.handed THEN
           CASE WHEN q.completed_retention_seconds > 0 THEN 'rcpt_k' ELSE 'rcpt_' END
           || replace(gen_random_uuid()::text, '-', '') END,
       CASE WHEN h.handed THEN coalesce(
           n.lease_expires_at,
           n.created_at + make_interval(secs => q.visibility_timeout_default)) END,
       CASE WHEN h.handed THEN n.created_at END
FROM unnest($1::text[], $2::int8[], $3::text[], $4::int4[], $5::text[], $6::text[],
            $7::timestamptz[], $8::timestamptz[], $9::text[], $10::bool[],
            $11::timestamptz[])
     WITH ORDINALITY AS n(id, queue_id, payload, priority, group_id, idempotency_key,
                          visible_at, created_at, headers, hand_out, lease_expires_at, ord)
-- A probe of the queues' primary key per message: this statement runs under
-- a generic plan (publish_group/mod.rs), which as a plain join hashes the
-- whole queues table on every group. It takes the queue row's KEY SHARE
-- lock (migration V24: what keeps a queue delete from passing the insert;
-- a second probe of a row this transaction holds takes nothing more): a
-- queue deleted meanwhile gives no row, and its messages stay unstored.
CROSS JOIN LATERAL (SELECT q.id, q.enable_priority, q.queue_type, q.paused, q.max_in_flight,
                           q.rate_per_sec, q.visibility_timeout_default,
                           q.completed_retention_seconds
                    FROM onceq_queues q
                    WHERE q.id = n.queue_id
                    FOR KEY SHARE) q
-- The probes of what a claim would hand out first (rules::hand_out::Ahead:
-- an available message of at least this priority, a delayed one now due)
-- come last, so the AND's short circuit runs them only for a message that
-- may otherwise go; OFFSET 0 keeps each a probe of its partial index, and
-- the one after them keeps `h` a subquery of its own: pulled up, its
-- expression would be copied into each of the five CASEs below that read
-- it, each copy with its own two probes, all started on every execution.
CROSS JOIN LATERAL (SELECT n.hand_out AND n.visible_at <= n.created_at
                           AND q.queue_type = 'standard' AND NOT q.paused
                           AND q.max_in_flight IS NULL AND q.rate_per_sec IS NULL
                           AND NOT EXISTS (
                               SELECT 1 FROM onceq_messages a
                               WHERE a.queue_id = q.id AND a.state = 'available'
                                 AND a.priority >= CASE WHEN q.enable_priority
                                                        THEN n.priority ELSE 0 END
                               OFFSET 0)
                           AND NOT EXISTS (
                               SELECT 1 FROM onceq_messages d
                               WHERE d.queue_id = q.id AND d.state = 'delayed'
                                 AND d.visible_at <= n.created_at
                               OFFSET 0)
                           AS handed
                    OFFSET 0) h
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
RETURNING id, state, created_at, receipt, lease_expires_at
