INSERT INTO onceq_webhook_attempts
    (webhook_id, attempted_at, event_id, event_type, attempt, outcome, status, latency_ms, error)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9
WHERE EXISTS (SELECT 1 FROM onceq_webhooks WHERE id = $1)
