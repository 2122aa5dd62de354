-- Same number as the SQLite V10.
-- A message's whole life (queue-api-2.md §5, docs/state-machines.md).
--
-- The history of a message is kept on its own row, not in a table of its
-- own: a failure (nack, lease expiry, failed push) stays the one UPDATE it
-- was, and an ack of a message its queue does not keep stays the one
-- DELETE it was. `attempts` is a JSON array of at most 20 ended hand-outs
-- (`rules::attempts`), NULL until the first ends, so this ALTER rewrites
-- no rows; `consumed_at` is when the current lease began (set by the claim,
-- cleared when it ends); `last_error` the latest error text a failure gave.
ALTER TABLE onceq_messages ADD COLUMN consumed_at timestamptz;
ALTER TABLE onceq_messages ADD COLUMN last_error text;
ALTER TABLE onceq_messages ADD COLUMN attempts text
    CHECK (attempts IS NULL OR jsonb_typeof(attempts::jsonb) = 'array');
ALTER TABLE onceq_messages ADD CONSTRAINT onceq_messages_consumed_in_flight
    CHECK (consumed_at IS NULL OR state = 'in_flight');

-- How long an acked (or cancelled) message is kept, 0 = not at all.
-- Bound: `rules::finished::MAX_COMPLETED_RETENTION_SECONDS` (30 days).
ALTER TABLE onceq_queues ADD COLUMN completed_retention_seconds integer NOT NULL DEFAULT 0
    CHECK (completed_retention_seconds BETWEEN 0 AND 2592000);

-- Finished messages a queue keeps: acked (`completed`) or cancelled. A
-- table of their own, so no query over onceq_messages (claims, the FIFO
-- head rule, depths, stats) sees them; purged through the expiry index.
CREATE TABLE onceq_finished (
    id              text PRIMARY KEY,
    queue_id        bigint NOT NULL REFERENCES onceq_queues (id) ON DELETE CASCADE,
    state           text NOT NULL CHECK (state IN ('completed', 'cancelled')),
    payload         text NOT NULL,
    priority        integer NOT NULL,
    group_id        text,
    idempotency_key text,
    headers         text,
    delivery_count  integer NOT NULL CHECK (delivery_count >= 0),
    created_at      timestamptz NOT NULL,
    visible_at      timestamptz NOT NULL,
    finished_at     timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL CHECK (expires_at >= finished_at),
    result          text CHECK (result IS NULL OR state = 'completed'),
    last_error      text,
    attempts        text CHECK (attempts IS NULL OR jsonb_typeof(attempts::jsonb) = 'array')
);
CREATE INDEX onceq_finished_expiry ON onceq_finished (expires_at);
CREATE INDEX onceq_finished_queue ON onceq_finished (queue_id);

-- `rules::attempts::append` in SQL, for the statements that end many
-- hand-outs at once (lease expiry) or end one without reading it first
-- (a kept ack): `attempts` with `attempt` appended, the oldest dropped
-- beyond `keep`.
CREATE FUNCTION onceq_attempts_append(attempts text, attempt jsonb, keep integer)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT jsonb_agg(a ORDER BY i)::text
    FROM (
        SELECT a, i, count(*) OVER () AS n
        FROM jsonb_array_elements(coalesce(attempts::jsonb, '[]'::jsonb) || jsonb_build_array(attempt))
             WITH ORDINALITY AS e(a, i)
    ) all_attempts
    WHERE i > n - keep
$$;

-- An attempt's time as `rules::attempts` writes it (RFC 3339, UTC).
CREATE FUNCTION onceq_attempt_time(t timestamptz)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;
