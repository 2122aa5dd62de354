SELECT id, project, url, events, secret, description, headers, created_at
FROM onceq_webhooks
ORDER BY created_at, id
