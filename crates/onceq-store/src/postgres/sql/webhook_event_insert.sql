-- One pending delivery per webhook of project $1 that listens to type $3
-- (or only webhook $6, whatever it listens to). Claimed by the caller until
-- $7 when given (its first attempt counted), else due at once ($5).
WITH made AS (
    INSERT INTO onceq_webhook_deliveries
        (webhook_id, event_id, event_type, body, event_at, attempts, due_at)
    SELECT w.id, $2, $3, $4, $5,
           CASE WHEN $7::timestamptz IS NULL THEN 0 ELSE 1 END,
           coalesce($7::timestamptz, $5)
    FROM onceq_webhooks w
    WHERE w.project = $1
      AND CASE WHEN $6::text IS NULL THEN $3 = ANY (w.events) OR '*' = ANY (w.events)
               ELSE w.id = $6 END
    ON CONFLICT (webhook_id, event_id) DO NOTHING
    RETURNING id, webhook_id, event_id, event_type, body, event_at, attempts
)
SELECT made.id AS delivery_id, made.event_id, made.event_type, made.body, made.event_at,
       made.attempts, w.id, w.project, w.url, w.events, w.secret, w.description, w.headers,
       w.created_at
FROM made JOIN onceq_webhooks w ON w.id = made.webhook_id
ORDER BY w.created_at, w.id
