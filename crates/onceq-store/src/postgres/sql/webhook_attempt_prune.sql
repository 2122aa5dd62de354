-- Keeps the newest $2 attempts of webhook $1.
DELETE FROM onceq_webhook_attempts
WHERE webhook_id = $1 AND id <= (
    SELECT id FROM onceq_webhook_attempts WHERE webhook_id = $1
    ORDER BY id DESC OFFSET $2 LIMIT 1
)
