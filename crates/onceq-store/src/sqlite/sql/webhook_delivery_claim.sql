-- Takes up to ?3 deliveries due at ?1, holding each until ?2 and counting
-- its attempt (the single writer serialises claims). Projects take turns
-- (`turn`: a delivery's rank among its project's due ones), each project
-- at most ?4, or what ?5 (a JSON object project -> room) allows it.
UPDATE onceq_webhook_deliveries
SET due_at = ?2, attempts = attempts + 1
WHERE id IN (
    SELECT due.id FROM (
        SELECT d.id, d.due_at, w.project,
               row_number() OVER (PARTITION BY w.project ORDER BY d.due_at, d.id) AS turn
        FROM onceq_webhook_deliveries d JOIN onceq_webhooks w ON w.id = d.webhook_id
        WHERE d.due_at <= ?1
    ) due
    LEFT JOIN json_each(?5) room ON room.key = due.project
    WHERE due.turn <= COALESCE(room.value, ?4)
    ORDER BY due.turn, due.due_at, due.id
    LIMIT ?3
)
RETURNING id, webhook_id, event_id, event_type, body, event_at, attempts
