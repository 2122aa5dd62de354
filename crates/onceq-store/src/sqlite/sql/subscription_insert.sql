INSERT INTO onceq_push_subscriptions
    (id, queue_id, url, secret, max_in_flight, timeout_seconds, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
