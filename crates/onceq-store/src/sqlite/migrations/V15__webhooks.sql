-- Account webhooks (docs/api.md, "Account webhooks"). Mirrors the
-- PostgreSQL V15; events are a JSON array of strings here.
CREATE TABLE onceq_webhooks (
    id          TEXT PRIMARY KEY CHECK (id LIKE 'whk\_%' ESCAPE '\'),
    project     TEXT NOT NULL,
    url         TEXT NOT NULL CHECK (url LIKE 'https://%' OR url LIKE 'http://%'),
    events      TEXT NOT NULL CHECK (
                    json_valid(events) AND json_type(events) = 'array'
                    AND json_array_length(events) BETWEEN 1 AND 16),
    secret      TEXT NOT NULL CHECK (length(CAST(secret AS BLOB)) BETWEEN 16 AND 255),
    description TEXT NOT NULL CHECK (length(CAST(description AS BLOB)) <= 500),
    headers     TEXT CHECK (headers IS NULL OR json_type(headers) = 'object'),
    created_at  INTEGER NOT NULL
);
CREATE INDEX onceq_webhooks_project ON onceq_webhooks (project, created_at, id);

-- The outbox (see the PostgreSQL V15).
CREATE TABLE onceq_webhook_deliveries (
    id          INTEGER PRIMARY KEY,
    webhook_id  TEXT NOT NULL REFERENCES onceq_webhooks (id) ON DELETE CASCADE,
    event_id    TEXT NOT NULL CHECK (event_id LIKE 'evt\_%' ESCAPE '\'),
    event_type  TEXT NOT NULL,
    body        TEXT NOT NULL,
    event_at    INTEGER NOT NULL,
    attempts    INTEGER NOT NULL CHECK (attempts >= 0),
    due_at      INTEGER NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX onceq_webhook_deliveries_due ON onceq_webhook_deliveries (due_at);

CREATE TABLE onceq_webhook_attempts (
    id           INTEGER PRIMARY KEY,
    webhook_id   TEXT NOT NULL REFERENCES onceq_webhooks (id) ON DELETE CASCADE,
    attempted_at INTEGER NOT NULL,
    event_id     TEXT NOT NULL,
    event_type   TEXT NOT NULL,
    attempt      INTEGER NOT NULL CHECK (attempt >= 1),
    outcome      TEXT NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'gave_up')),
    status       INTEGER CHECK (status BETWEEN 100 AND 999),
    latency_ms   INTEGER NOT NULL CHECK (latency_ms >= 0),
    error        TEXT,
    CHECK ((outcome = 'delivered') = (error IS NULL))
);
CREATE INDEX onceq_webhook_attempts_webhook ON onceq_webhook_attempts (webhook_id, id);
