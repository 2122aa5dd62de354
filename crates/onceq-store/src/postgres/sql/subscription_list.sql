SELECT id, url, secret, max_in_flight, timeout_seconds, created_at
FROM onceq_push_subscriptions
WHERE queue_id = $1
ORDER BY created_at, id
