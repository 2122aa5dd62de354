-- Takes up to $3 deliveries due at $1, holding each until $2 and counting
-- its attempt. Projects take turns (`turn`: a delivery's rank among its
-- project's due ones), each project at most $4, or what $5 (a JSON object
-- project -> room) allows it. SKIP LOCKED: servers claiming at once take
-- different rows.
WITH due AS (
    SELECT d.id, d.due_at, w.project,
           row_number() OVER (PARTITION BY w.project ORDER BY d.due_at, d.id) AS turn
    FROM onceq_webhook_deliveries d JOIN onceq_webhooks w ON w.id = d.webhook_id
    WHERE d.due_at <= $1
), fair AS (
    SELECT due.id FROM due
    LEFT JOIN jsonb_each_text(CAST($5::text AS jsonb)) room ON room.key = due.project
    WHERE due.turn <= COALESCE(room.value::bigint, $4)
    ORDER BY due.turn, due.due_at, due.id
    LIMIT $3
), picked AS (
    -- `due_at` again: a row another server claimed and committed since the
    -- snapshot above is re-read here, and then no longer due.
    SELECT id FROM onceq_webhook_deliveries
    WHERE id IN (SELECT id FROM fair) AND due_at <= $1
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
