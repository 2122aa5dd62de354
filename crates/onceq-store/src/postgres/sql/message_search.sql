-- The queue's message with id $6, and its messages published with
-- idempotency key $6: two index probes (the primary key, and
-- onceq_messages_idempotency from V5), never a scan of the backlog.
-- Then the same cursor, state filter and limit as message_list.sql, and
-- the message group filter ($7 or NULL).
SELECT s.*
FROM (
    SELECT m.seq, m.id, m.payload,
           CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END AS state,
           m.priority, m.group_id, m.idempotency_key, m.delivery_count,
           m.created_at, m.visible_at, m.lease_expires_at, m.headers, m.last_error, m.attempts
    FROM onceq_messages m
    WHERE m.id = $6 AND m.queue_id = $1
    UNION
    SELECT m.seq, m.id, m.payload,
           CASE WHEN m.state = 'delayed' AND m.visible_at <= $3 THEN 'available' ELSE m.state END AS state,
           m.priority, m.group_id, m.idempotency_key, m.delivery_count,
           m.created_at, m.visible_at, m.lease_expires_at, m.headers, m.last_error, m.attempts
    FROM onceq_messages m
    WHERE m.queue_id = $1 AND m.idempotency_key = $6
) s
WHERE s.seq > $2 AND ($7::text IS NULL OR s.group_id = $7) AND ($4::text IS NULL OR s.state = $4)
ORDER BY s.seq
LIMIT $5
