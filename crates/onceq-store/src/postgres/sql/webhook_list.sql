SELECT id, project, url, events, secret, description, headers, created_at
FROM onceq_webhooks WHERE project = $1
ORDER BY created_at, id
