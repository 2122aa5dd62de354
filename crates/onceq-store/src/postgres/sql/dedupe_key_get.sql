-- The key's first message, if still held (it may have moved to a DLQ).
SELECT k.message_id, k.payload_hash, k.created_at, m.state, m.delivery_count, m.visible_at
FROM onceq_dedupe_keys k
LEFT JOIN onceq_messages m ON m.id = k.message_id
WHERE k.queue_id = $1 AND k.key = $2
