DELETE FROM onceq_push_subscriptions
WHERE queue_id = $1 AND id = $2
