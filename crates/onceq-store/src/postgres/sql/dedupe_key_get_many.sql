-- dedupe_key_get.sql for the keys of a group that were already held: each
-- key's first message, if still held (it may have moved to a DLQ).
SELECT k.queue_id, k.key, k.message_id, k.payload_hash, k.created_at,
       m.state, m.delivery_count, m.visible_at
FROM unnest($1::int8[], $2::text[]) AS n(queue_id, key)
JOIN onceq_dedupe_keys k ON k.queue_id = n.queue_id AND k.key = n.key
LEFT JOIN onceq_messages m ON m.id = k.message_id
