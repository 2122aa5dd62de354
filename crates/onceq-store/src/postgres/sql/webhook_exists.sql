SELECT 1 FROM onceq_webhooks WHERE project = $1 AND id = $2
