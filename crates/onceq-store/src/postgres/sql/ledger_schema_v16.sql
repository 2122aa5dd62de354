-- The request ledger. Created by PgLedger::new; several processes may start
-- at once, and CREATE TABLE IF NOT EXISTS alone can still fail with a
-- unique violation on pg_type when two race, so creation is serialized
-- under a transaction-scoped advisory lock (released at COMMIT).
SELECT pg_advisory_xact_lock(7314159265358979001);

CREATE TABLE IF NOT EXISTS onceq_request_ledger (
    -- who asked, and where: a key means one thing per scope. The toolkit's
    -- is principal + method + route, the server's project + capability
    -- (`server:` + length-prefixed project, so a project's entries are a
    -- scope prefix). Byte order ("C"), so that prefix is an index range
    -- (LIKE 'prefix%' uses the primary key); equality is unchanged.
    scope        text        COLLATE "C" NOT NULL,
    key          text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of method, route and canonical body
    fingerprint  bytea       NOT NULL CHECK (length(fingerprint) = 32),
    -- names the current claim; complete/release only act on their own
    token        text        NOT NULL,
    -- the recorded answer, NULL while in flight; never a server error
    status       int         CHECK (status BETWEEN 100 AND 499),
    headers      jsonb,
    body         bytea,
    -- the claim's lease, set exactly while in flight
    locked_until timestamptz,
    created_at   timestamptz NOT NULL,
    completed_at timestamptz,
    expires_at   timestamptz NOT NULL CHECK (expires_at > created_at),
    PRIMARY KEY (scope, key),
    -- in flight: a lease and no answer; completed: an answer and no lease
    CONSTRAINT onceq_request_ledger_state CHECK (
        (status IS NULL AND headers IS NULL AND body IS NULL
            AND completed_at IS NULL AND locked_until IS NOT NULL)
        OR (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL
            AND completed_at IS NOT NULL AND locked_until IS NULL)
    )
);

CREATE INDEX IF NOT EXISTS onceq_request_ledger_expires_at
    ON onceq_request_ledger (expires_at);
