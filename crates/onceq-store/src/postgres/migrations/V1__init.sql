-- onceq schema, PostgreSQL. The SQLite schema (../../sqlite/migrations) has
-- the same tables, columns and CHECKs under the same migration numbers.
-- State machine of a message: docs/state-machines.md.

CREATE TABLE onceq_projects (
    name       text PRIMARY KEY,
    created_at timestamptz NOT NULL
);

CREATE TABLE onceq_api_keys (
    key_id     text PRIMARY KEY,
    project    text NOT NULL REFERENCES onceq_projects (name),
    key_hash   bytea NOT NULL UNIQUE CHECK (octet_length(key_hash) = 32),
    label      text,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE TABLE onceq_queues (
    id                         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project                    text NOT NULL REFERENCES onceq_projects (name),
    name                       text NOT NULL,
    queue_type                 text NOT NULL CHECK (queue_type IN ('standard', 'fifo')),
    dead_letter_queue_id       bigint REFERENCES onceq_queues (id) ON DELETE SET NULL,
    max_retries                integer NOT NULL CHECK (max_retries BETWEEN 0 AND 1000),
    message_retention_days     integer NOT NULL CHECK (message_retention_days BETWEEN 1 AND 30),
    visibility_timeout_default integer NOT NULL CHECK (visibility_timeout_default BETWEEN 0 AND 43200),
    enable_priority            boolean NOT NULL,
    created_at                 timestamptz NOT NULL,
    UNIQUE (project, name),
    CHECK (dead_letter_queue_id IS DISTINCT FROM id)
);

CREATE TABLE onceq_messages (
    id               text PRIMARY KEY,
    queue_id         bigint NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    -- publish order; "oldest first" means lowest seq first
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    state            text NOT NULL CHECK (state IN ('available', 'delayed', 'in_flight')),
    payload          text NOT NULL,
    priority         integer NOT NULL DEFAULT 0,
    group_id         text,
    idempotency_key  text,
    delivery_count   integer NOT NULL DEFAULT 0 CHECK (delivery_count >= 0),
    -- when a delayed message becomes available
    visible_at       timestamptz NOT NULL,
    receipt          text,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL,
    -- a lease exists exactly while the message is in flight
    CHECK ((state = 'in_flight') = (receipt IS NOT NULL)),
    CHECK ((state = 'in_flight') = (lease_expires_at IS NOT NULL))
);

-- claim: the next available messages of one queue, without touching others
CREATE INDEX onceq_messages_available ON onceq_messages (queue_id, priority DESC, seq)
    WHERE state = 'available';
-- promotion of due delayed messages
CREATE INDEX onceq_messages_delayed ON onceq_messages (queue_id, visible_at)
    WHERE state = 'delayed';
-- the lease reaper
CREATE INDEX onceq_messages_leased ON onceq_messages (lease_expires_at)
    WHERE state = 'in_flight';
-- per-queue scans: stats, purge, delete, oldest message, retention
CREATE INDEX onceq_messages_queue ON onceq_messages (queue_id, seq);

CREATE TABLE onceq_dedupe_keys (
    queue_id     bigint NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    key          text NOT NULL,
    message_id   text NOT NULL,
    payload_hash bytea NOT NULL CHECK (octet_length(payload_hash) = 32),
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (queue_id, key)
);

CREATE INDEX onceq_dedupe_keys_expiry ON onceq_dedupe_keys (expires_at);
