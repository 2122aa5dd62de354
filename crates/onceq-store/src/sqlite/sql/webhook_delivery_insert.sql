INSERT INTO onceq_webhook_deliveries
    (webhook_id, event_id, event_type, body, event_at, attempts, due_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (webhook_id, event_id) DO NOTHING
RETURNING id
