-- dedupe_key_get.sql for the keys of a group that were already held: each
-- key's first message, if still held (it may have moved to a DLQ).
SELECT k.queue_id, k.key, k.message_id, k.payload_hash, k.created_at,
       m.state, m.delivery_count, m.visible_at
FROM unnest($1::int8[], $2::text[]) AS n(queue_id, key)
-- Probes per key (LATERAL ... OFFSET 0), as every hot statement: planned
-- as joins, a generic plan made on empty tables walked whole indexes.
CROSS JOIN LATERAL (SELECT * FROM onceq_dedupe_keys k
                    WHERE k.queue_id = n.queue_id AND k.key = n.key OFFSET 0) k
LEFT JOIN LATERAL (SELECT m.state, m.delivery_count, m.visible_at FROM onceq_messages m
                   WHERE m.id = k.message_id OFFSET 0) m ON true
