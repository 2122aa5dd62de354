-- Same number as the PostgreSQL V10, which says why the history lives on
-- the message's row. `consumed_at`: when the current lease began (set by
-- the claim, cleared when the lease ends).
ALTER TABLE onceq_messages ADD COLUMN consumed_at INTEGER
    CHECK (consumed_at IS NULL OR state = 'in_flight');
ALTER TABLE onceq_messages ADD COLUMN last_error TEXT;
ALTER TABLE onceq_messages ADD COLUMN attempts TEXT
    CHECK (attempts IS NULL OR json_type(attempts) = 'array');

ALTER TABLE onceq_queues ADD COLUMN completed_retention_seconds INTEGER NOT NULL DEFAULT 0
    CHECK (completed_retention_seconds BETWEEN 0 AND 2592000);

CREATE TABLE onceq_finished (
    id              TEXT PRIMARY KEY,
    queue_id        INTEGER NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    state           TEXT NOT NULL CHECK (state IN ('completed', 'cancelled')),
    payload         TEXT NOT NULL,
    priority        INTEGER NOT NULL,
    group_id        TEXT,
    idempotency_key TEXT,
    headers         TEXT,
    delivery_count  INTEGER NOT NULL CHECK (delivery_count >= 0),
    created_at      INTEGER NOT NULL,
    visible_at      INTEGER NOT NULL,
    finished_at     INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL CHECK (expires_at >= finished_at),
    result          TEXT CHECK (result IS NULL OR state = 'completed'),
    last_error      TEXT,
    attempts        TEXT CHECK (attempts IS NULL OR json_type(attempts) = 'array')
);
CREATE INDEX onceq_finished_expiry ON onceq_finished (expires_at);
CREATE INDEX onceq_finished_queue ON onceq_finished (queue_id);
