-- A group's idempotency keys and its new messages (publish_group/mod.rs),
-- in one statement: what a publish alone does with dedupe_key_claim.sql and
-- message_insert.sql, for the whole group. One statement, so that a group
-- of single publishes to known queues needs nothing else: sent alone,
-- without BEGIN or COMMIT, it is a transaction of its own, committed before
-- it answers (one round trip, one Sync; publish_group/transaction.rs).
--
-- $1–$6, the keys: the caller sorts them by (queue_id, key) and folds
-- duplicates first: rows are inserted (and their index entries locked) in
-- array order, so two groups wanting overlapping keys wait on each other in
-- one order and never deadlock, and no row is touched twice by this
-- statement. A key returned is ours; a key not returned is held by an
-- earlier publish within its window (a concurrent one blocks us here until
-- it commits). Only for queues that exist (a probe of their primary key per
-- key; the keys have no foreign key since migration V22): a group working
-- from a deleted queue's cached id claims nothing there, so its publishes,
-- left unstored, are retried or published alone instead of leaving a key
-- behind on the old id.
--
-- $7–$17, the messages, by queue id (the group looked its queues up
-- first). ORDER BY keeps each publish's order in `seq`. A message with an
-- idempotency key is stored only if its key was taken for it: by `claimed`
-- or earlier in the transaction; a key held by an earlier publish makes it
-- a replay instead. Per queue: a FIFO message without a group joins
-- `default`, and priority is stored only where the queue enables it (FIFO
-- order ignores it).
--
-- A message asked to be handed out ($16: a consumer waits for it) is stored
-- in flight under a lease when rules::hand_out::allowed says so (`h.handed`
-- below is that rule): its first delivery, as message_claim_plain.sql would
-- make it, with the lease from $17 or the queue's default.
--
-- The rows: a key's (`queue_id`, `key`, no `id`), then a message's (`id`
-- and what its answer needs, no key).
WITH claimed AS (
INSERT INTO onceq_dedupe_keys (queue_id, key, message_id, payload_hash, created_at, expires_at)
SELECT n.queue_id, n.key, n.message_id, n.payload_hash, n.created_at, n.expires_at
FROM unnest($1::int8[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[], $6::timestamptz[])
     WITH ORDINALITY AS n(queue_id, key, message_id, payload_hash, created_at, expires_at, ord)
-- OFFSET 0 keeps it a probe per key under the generic plan (see the
-- messages' probe of their queue below).
CROSS JOIN LATERAL (SELECT 1 FROM onceq_queues q WHERE q.id = n.queue_id OFFSET 0) q
ORDER BY n.ord
ON CONFLICT (queue_id, key) DO UPDATE
SET message_id = EXCLUDED.message_id,
    payload_hash = EXCLUDED.payload_hash,
    created_at = EXCLUDED.created_at,
    expires_at = EXCLUDED.expires_at
WHERE onceq_dedupe_keys.expires_at <= EXCLUDED.created_at
RETURNING queue_id, key, message_id
), stored AS (
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
FROM unnest($7::text[], $8::int8[], $9::text[], $10::int4[], $11::text[], $12::text[],
            $13::timestamptz[], $14::timestamptz[], $15::text[], $16::bool[],
            $17::timestamptz[])
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
   -- Its key taken by this statement: read from `claimed`, since the
   -- statement's snapshot does not see the rows it inserts itself (an IN
   -- of the whole list, hashed once, not a scan of it per message)…
   OR (n.queue_id, n.idempotency_key, n.id) IN (SELECT c.queue_id, c.key, c.message_id
                                               FROM claimed c)
   -- …or earlier in this transaction (a FIFO queue's messages, inserted
   -- after their groups' locks with no keys to claim here; a held key's
   -- row names another message and stores nothing).
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
)
SELECT NULL::text AS id, NULL::text AS state, NULL::timestamptz AS created_at,
       NULL::text AS receipt, NULL::timestamptz AS lease_expires_at, queue_id, key
FROM claimed
UNION ALL
SELECT id, state, created_at, receipt, lease_expires_at, NULL::int8, NULL::text
FROM stored
