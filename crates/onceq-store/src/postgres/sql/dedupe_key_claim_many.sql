-- dedupe_key_claim.sql for a whole group of publishes in one statement. The
-- caller sorts the keys by (queue_id, key) and folds duplicates first: rows
-- are inserted (and their index entries locked) in array order, so two
-- groups wanting overlapping keys wait on each other in one order and never
-- deadlock, and no row is touched twice by this statement. A key returned
-- is ours; a key not returned is held by an earlier publish within its
-- window (a concurrent one blocks us here until it commits, as with the
-- single-key form).
--
-- Only for queues that exist (a probe of their primary key per key; the
-- keys have no foreign key since migration V22): a group working from a
-- deleted queue's cached id claims nothing there, so its publishes, left
-- unstored, are retried or published alone (publish_group/transaction.rs)
-- instead of leaving a key behind on the old id.
INSERT INTO onceq_dedupe_keys (queue_id, key, message_id, payload_hash, created_at, expires_at)
SELECT n.queue_id, n.key, n.message_id, n.payload_hash, n.created_at, n.expires_at
FROM unnest($1::int8[], $2::text[], $3::text[], $4::bytea[], $5::timestamptz[], $6::timestamptz[])
     WITH ORDINALITY AS n(queue_id, key, message_id, payload_hash, created_at, expires_at, ord)
-- OFFSET 0 keeps it a probe per key under the generic plan (see
-- message_insert_many.sql).
CROSS JOIN LATERAL (SELECT 1 FROM onceq_queues q WHERE q.id = n.queue_id OFFSET 0) q
ORDER BY n.ord
ON CONFLICT (queue_id, key) DO UPDATE
SET message_id = EXCLUDED.message_id,
    payload_hash = EXCLUDED.payload_hash,
    created_at = EXCLUDED.created_at,
    expires_at = EXCLUDED.expires_at
WHERE onceq_dedupe_keys.expires_at <= EXCLUDED.created_at
RETURNING queue_id, key
