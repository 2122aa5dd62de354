SELECT id, project, url, events, secret, description, headers, created_at
FROM onceq_webhooks WHERE id = ?1
