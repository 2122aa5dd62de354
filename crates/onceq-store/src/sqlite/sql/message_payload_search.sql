-- The dashboard's search in payloads, bounded: the queue's newest ?3
-- messages (a backward walk of onceq_messages_queue (queue_id, seq),
-- LIMIT ?3), of which those whose payload contains ?4 (instr: a plain
-- substring, no pattern), newest first, ?5 at most. Never reads more than
-- ?3 rows, however large the backlog.
-- ?1 queue id, ?2 now, ?3 scan bound, ?4 text, ?5 limit.
SELECT r.seq, r.id, r.payload,
       CASE WHEN r.state = 'delayed' AND r.visible_at <= ?2 THEN 'available' ELSE r.state END AS state,
       r.priority, r.group_id, r.idempotency_key, r.delivery_count,
       r.created_at, r.visible_at, r.lease_expires_at, r.headers, r.last_error, r.attempts
FROM (
    SELECT m.seq, m.id, m.payload, m.state, m.priority, m.group_id, m.idempotency_key,
           m.delivery_count, m.created_at, m.visible_at, m.lease_expires_at, m.headers,
           m.last_error, m.attempts
    FROM onceq_messages m
    WHERE m.queue_id = ?1
    ORDER BY m.seq DESC
    LIMIT ?3
) r
WHERE instr(r.payload, ?4) > 0
ORDER BY r.seq DESC
LIMIT ?5
