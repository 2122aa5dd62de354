-- Takes up to $3 deliveries due at $1, holding each until $2 and counting
-- its attempt. SKIP LOCKED: servers claiming at once take different rows.
WITH picked AS (
    SELECT id FROM onceq_webhook_deliveries
    WHERE due_at <= $1
    ORDER BY due_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
), taken AS (
    UPDATE onceq_webhook_deliveries d
    SET due_at = $2, attempts = d.attempts + 1
    FROM picked WHERE d.id = picked.id
    RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.body, d.event_at, d.attempts
)
SELECT taken.id AS delivery_id, taken.event_id, taken.event_type, taken.body, taken.event_at,
       taken.attempts, w.id, w.project, w.url, w.events, w.secret, w.description, w.headers,
       w.created_at
FROM taken JOIN onceq_webhooks w ON w.id = taken.webhook_id
ORDER BY taken.id
