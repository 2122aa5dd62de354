-- Claims a key in one statement; see sql/postgres/claim.sql for the rules.
-- ?1 scope, ?2 key, ?3 fingerprint, ?4 token, ?5 locked_until,
-- ?6 now (created_at), ?7 expires_at
INSERT INTO onceq_request_ledger AS l
    (scope, key, fingerprint, token, locked_until, created_at, expires_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (scope, key) DO UPDATE SET
    fingerprint  = excluded.fingerprint,
    token        = excluded.token,
    status       = NULL,
    headers      = NULL,
    body         = NULL,
    locked_until = excluded.locked_until,
    created_at   = excluded.created_at,
    completed_at = NULL,
    expires_at   = excluded.expires_at
WHERE l.expires_at <= excluded.created_at
   OR (l.status IS NULL
       AND l.locked_until <= excluded.created_at
       AND l.fingerprint = excluded.fingerprint)
RETURNING token
