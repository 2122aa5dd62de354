-- Account webhooks (docs/api.md, "Account webhooks"). Same number as the
-- SQLite V15.
--
-- onceq_webhooks: a project's endpoints and the events each receives. The
-- secret is kept as given (every delivery is signed with it).
CREATE TABLE onceq_webhooks (
    id          text PRIMARY KEY CHECK (id LIKE 'whk\_%'),
    project     text NOT NULL,
    url         text NOT NULL CHECK (url LIKE 'https://%' OR url LIKE 'http://%'),
    events      text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 16),
    secret      text NOT NULL CHECK (octet_length(secret) BETWEEN 16 AND 255),
    description text NOT NULL CHECK (octet_length(description) <= 500),
    headers     text CHECK (headers IS NULL OR left(headers, 1) = '{'),
    created_at  timestamptz NOT NULL
);
CREATE INDEX onceq_webhooks_project ON onceq_webhooks (project, created_at, id);

-- The outbox: one row per (webhook, event) not yet delivered nor given up.
-- due_at is when it may next be attempted; a claim moves it to the end of
-- the claim, so a holder that dies leaves it due again then (at least
-- once). The body is fixed when the event is recorded: every attempt sends
-- the same bytes and event id.
CREATE TABLE onceq_webhook_deliveries (
    id          bigserial PRIMARY KEY,
    webhook_id  text NOT NULL REFERENCES onceq_webhooks (id) ON DELETE CASCADE,
    event_id    text NOT NULL CHECK (event_id LIKE 'evt\_%'),
    event_type  text NOT NULL,
    body        text NOT NULL,
    event_at    timestamptz NOT NULL,
    attempts    integer NOT NULL CHECK (attempts >= 0),
    due_at      timestamptz NOT NULL,
    UNIQUE (webhook_id, event_id)
);
CREATE INDEX onceq_webhook_deliveries_due ON onceq_webhook_deliveries (due_at);

-- Recent attempts per webhook (the newest MAX_ATTEMPTS_KEPT = 100 are kept).
CREATE TABLE onceq_webhook_attempts (
    id           bigserial PRIMARY KEY,
    webhook_id   text NOT NULL REFERENCES onceq_webhooks (id) ON DELETE CASCADE,
    attempted_at timestamptz NOT NULL,
    event_id     text NOT NULL,
    event_type   text NOT NULL,
    attempt      integer NOT NULL CHECK (attempt >= 1),
    outcome      text NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'gave_up')),
    status       integer CHECK (status BETWEEN 100 AND 999),
    latency_ms   bigint NOT NULL CHECK (latency_ms >= 0),
    error        text,
    CHECK ((outcome = 'delivered') = (error IS NULL))
);
CREATE INDEX onceq_webhook_attempts_webhook ON onceq_webhook_attempts (webhook_id, id);
