-- Takes up to ?3 deliveries due at ?1, holding each until ?2 and counting
-- its attempt (the single writer serialises claims).
UPDATE onceq_webhook_deliveries
SET due_at = ?2, attempts = attempts + 1
WHERE id IN (
    SELECT id FROM onceq_webhook_deliveries
    WHERE due_at <= ?1
    ORDER BY due_at, id
    LIMIT ?3
)
RETURNING id, webhook_id, event_id, event_type, body, event_at, attempts
