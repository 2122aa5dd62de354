-- Push subscriptions (docs/api.md, "Push subscriptions"). Mirrors the
-- PostgreSQL V3. The secret is kept as given: deliveries are signed with it.
CREATE TABLE onceq_push_subscriptions (
    id              TEXT PRIMARY KEY,
    queue_id        INTEGER NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    url             TEXT NOT NULL CHECK (url LIKE 'https://%' OR url LIKE 'http://%'),
    secret          TEXT NOT NULL CHECK (length(CAST(secret AS BLOB)) BETWEEN 16 AND 255),
    max_in_flight   INTEGER NOT NULL CHECK (max_in_flight BETWEEN 1 AND 100),
    timeout_seconds INTEGER NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 300),
    created_at      INTEGER NOT NULL
);

CREATE INDEX onceq_push_subscriptions_queue ON onceq_push_subscriptions (queue_id, created_at, id);
