-- The request ledger. Times are INTEGER microseconds since the Unix epoch,
-- always the layer's clock, never SQLite's.
CREATE TABLE IF NOT EXISTS onceq_request_ledger (
    -- who asked, and where: a key means one thing per scope. The toolkit's
    -- is principal + method + route, the server's project + capability
    -- (`server:` + length-prefixed project, so a project's entries are a
    -- scope prefix: a range of the primary key, BINARY collation).
    scope        TEXT    NOT NULL,
    key          TEXT    NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of method, route and canonical body
    fingerprint  BLOB    NOT NULL CHECK (length(fingerprint) = 32),
    -- names the current claim; complete/release only act on their own
    token        TEXT    NOT NULL,
    -- the recorded answer, NULL while in flight; never a server error
    status       INTEGER CHECK (status BETWEEN 100 AND 499),
    headers      TEXT    CHECK (headers IS NULL OR json_valid(headers)),
    body         BLOB,
    -- the claim's lease, set exactly while in flight
    locked_until INTEGER,
    created_at   INTEGER NOT NULL,
    completed_at INTEGER,
    expires_at   INTEGER NOT NULL CHECK (expires_at > created_at),
    PRIMARY KEY (scope, key),
    -- in flight: a lease and no answer; completed: an answer and no lease
    CONSTRAINT onceq_request_ledger_state CHECK (
        (status IS NULL AND headers IS NULL AND body IS NULL
            AND completed_at IS NULL AND locked_until IS NOT NULL)
        OR (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL
            AND completed_at IS NOT NULL AND locked_until IS NULL)
    )
) STRICT;

CREATE INDEX IF NOT EXISTS onceq_request_ledger_expires_at
    ON onceq_request_ledger (expires_at);
