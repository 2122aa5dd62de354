-- Claims a key in one statement. A new key is inserted; an existing entry is
-- taken over only when it counts as absent (past its retention) or when its
-- claim was abandoned (no answer, lease over) by a request with the same
-- fingerprint. Otherwise no row comes back and the caller reads the entry.
-- Concurrent claims of one key serialize on the primary key: exactly one
-- inserts or takes over. A conflict is never an error here, so any error
-- is a real failure (503), not "in flight".
-- $1 scope, $2 key, $3 fingerprint, $4 token, $5 locked_until,
-- $6 now (created_at), $7 expires_at
INSERT INTO onceq_request_ledger AS l
    (scope, key, fingerprint, token, locked_until, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (scope, key) DO UPDATE SET
    fingerprint  = EXCLUDED.fingerprint,
    token        = EXCLUDED.token,
    status       = NULL,
    headers      = NULL,
    body         = NULL,
    locked_until = EXCLUDED.locked_until,
    created_at   = EXCLUDED.created_at,
    completed_at = NULL,
    expires_at   = EXCLUDED.expires_at
WHERE l.expires_at <= EXCLUDED.created_at
   OR (l.status IS NULL
       AND l.locked_until <= EXCLUDED.created_at
       AND l.fingerprint = EXCLUDED.fingerprint)
RETURNING token
