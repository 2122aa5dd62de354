-- Push subscriptions (docs/api.md, "Push subscriptions"). Same number as the
-- SQLite V3.
--
-- A subscription holds no delivery state: deliveries are claims, acks and
-- nacks of the queue's messages, so they live in the messages' leases.
-- The secret is kept as given, not hashed: every delivery is signed with it
-- (HMAC needs the key itself).
CREATE TABLE onceq_push_subscriptions (
    id              text PRIMARY KEY,
    queue_id        bigint NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    url             text NOT NULL CHECK (url LIKE 'https://%' OR url LIKE 'http://%'),
    secret          text NOT NULL CHECK (octet_length(secret) BETWEEN 16 AND 255),
    max_in_flight   integer NOT NULL CHECK (max_in_flight BETWEEN 1 AND 100),
    timeout_seconds integer NOT NULL CHECK (timeout_seconds BETWEEN 1 AND 300),
    created_at      timestamptz NOT NULL
);

-- a queue's subscriptions, oldest first; the ON DELETE CASCADE's lookup
CREATE INDEX onceq_push_subscriptions_queue ON onceq_push_subscriptions (queue_id, created_at, id);
