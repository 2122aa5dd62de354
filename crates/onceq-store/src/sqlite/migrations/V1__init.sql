-- onceq schema, SQLite. Mirrors ../../postgres/migrations under the same
-- numbers. Timestamps are INTEGER microseconds since the Unix epoch.
-- State machine of a message: docs/state-machines.md.

CREATE TABLE onceq_projects (
    name       TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);

CREATE TABLE onceq_api_keys (
    key_id     TEXT PRIMARY KEY,
    project    TEXT NOT NULL REFERENCES onceq_projects (name),
    key_hash   BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    label      TEXT,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);

CREATE TABLE onceq_queues (
    id                         INTEGER PRIMARY KEY AUTOINCREMENT,
    project                    TEXT NOT NULL REFERENCES onceq_projects (name),
    name                       TEXT NOT NULL,
    queue_type                 TEXT NOT NULL CHECK (queue_type IN ('standard', 'fifo')),
    dead_letter_queue_id       INTEGER REFERENCES onceq_queues (id) ON DELETE SET NULL,
    max_retries                INTEGER NOT NULL CHECK (max_retries BETWEEN 0 AND 1000),
    message_retention_days     INTEGER NOT NULL CHECK (message_retention_days BETWEEN 1 AND 30),
    visibility_timeout_default INTEGER NOT NULL CHECK (visibility_timeout_default BETWEEN 0 AND 43200),
    enable_priority            INTEGER NOT NULL CHECK (enable_priority IN (0, 1)),
    created_at                 INTEGER NOT NULL,
    UNIQUE (project, name),
    CHECK (dead_letter_queue_id IS NOT id)
);

CREATE TABLE onceq_messages (
    -- publish order; "oldest first" means lowest seq first
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    queue_id         INTEGER NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    state            TEXT NOT NULL CHECK (state IN ('available', 'delayed', 'in_flight')),
    payload          TEXT NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    group_id         TEXT,
    idempotency_key  TEXT,
    delivery_count   INTEGER NOT NULL DEFAULT 0 CHECK (delivery_count >= 0),
    visible_at       INTEGER NOT NULL,
    receipt          TEXT,
    lease_expires_at INTEGER,
    created_at       INTEGER NOT NULL,
    CHECK ((state = 'in_flight') = (receipt IS NOT NULL)),
    CHECK ((state = 'in_flight') = (lease_expires_at IS NOT NULL))
);

CREATE INDEX onceq_messages_available ON onceq_messages (queue_id, priority DESC, seq)
    WHERE state = 'available';
CREATE INDEX onceq_messages_delayed ON onceq_messages (queue_id, visible_at)
    WHERE state = 'delayed';
CREATE INDEX onceq_messages_leased ON onceq_messages (lease_expires_at)
    WHERE state = 'in_flight';
CREATE INDEX onceq_messages_queue ON onceq_messages (queue_id, seq);

CREATE TABLE onceq_dedupe_keys (
    queue_id     INTEGER NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    key          TEXT NOT NULL,
    message_id   TEXT NOT NULL,
    payload_hash BLOB NOT NULL CHECK (length(payload_hash) = 32),
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL,
    PRIMARY KEY (queue_id, key)
);

CREATE INDEX onceq_dedupe_keys_expiry ON onceq_dedupe_keys (expires_at);
