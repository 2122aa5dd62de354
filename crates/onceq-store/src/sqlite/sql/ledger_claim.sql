-- Claims an Idempotency-Key in one statement (rules/ledger.rs). A new key is
-- inserted; an existing entry is taken over only when it counts as absent
-- (past its window) or when its claim was abandoned (no answer, lease over)
-- by a request with the same fingerprint. Otherwise no row comes back and
-- the caller reads the entry (ledger_get.sql). Concurrent claims of one key
-- serialize on the primary key: exactly one inserts or takes over.
-- ?1 project, ?2 capability, ?3 key, ?4 fingerprint, ?5 token,
-- ?6 locked_until, ?7 now (created_at), ?8 expires_at
INSERT INTO onceq_call_ledger AS l
    (project, capability, key, fingerprint, token, locked_until, created_at, expires_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
ON CONFLICT (project, capability, key) DO UPDATE SET
    fingerprint  = excluded.fingerprint,
    token        = excluded.token,
    status       = NULL,
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
