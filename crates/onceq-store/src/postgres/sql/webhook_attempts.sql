SELECT attempted_at, event_id, event_type, attempt, outcome, status, latency_ms, error
FROM onceq_webhook_attempts
WHERE webhook_id = $1
ORDER BY id DESC
LIMIT $2
