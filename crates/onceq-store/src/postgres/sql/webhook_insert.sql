INSERT INTO onceq_webhooks (id, project, url, events, secret, description, headers, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING created_at
