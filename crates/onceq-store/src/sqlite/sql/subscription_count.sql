SELECT count(*) FROM onceq_push_subscriptions WHERE queue_id = ?1
