-- Same number as the PostgreSQL V13.
-- The server's call ledger (queue-api-2.md §4, docs/state-machines.md
-- "A request-ledger entry"): one row per Idempotency-Key of a mutating
-- call, scoped by (project, capability). Times are INTEGER microseconds.
CREATE TABLE onceq_call_ledger (
    project      TEXT    NOT NULL,
    -- the capability id (queue.create, queue.nack, ...)
    capability   TEXT    NOT NULL,
    key          TEXT    NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of method, path and canonical body
    fingerprint  BLOB    NOT NULL CHECK (length(fingerprint) = 32),
    -- names the current claim; complete/release only act on their own
    token        TEXT    NOT NULL,
    -- the recorded answer, NULL while in flight; never a server error
    status       INTEGER CHECK (status BETWEEN 100 AND 499),
    body         BLOB,
    -- the claim's lease, set exactly while in flight
    locked_until INTEGER,
    created_at   INTEGER NOT NULL,
    completed_at INTEGER,
    expires_at   INTEGER NOT NULL CHECK (expires_at > created_at),
    PRIMARY KEY (project, capability, key),
    -- in flight: a lease and no answer; completed: an answer and no lease
    CONSTRAINT onceq_call_ledger_state CHECK (
        (status IS NULL AND body IS NULL AND completed_at IS NULL
            AND locked_until IS NOT NULL)
        OR (status IS NOT NULL AND body IS NOT NULL
            AND completed_at IS NOT NULL AND locked_until IS NULL)
    )
) STRICT;

CREATE INDEX onceq_call_ledger_expires_at ON onceq_call_ledger (expires_at);
