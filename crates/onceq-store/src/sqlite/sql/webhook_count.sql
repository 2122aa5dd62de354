SELECT count(*) FROM onceq_webhooks WHERE project = ?1
