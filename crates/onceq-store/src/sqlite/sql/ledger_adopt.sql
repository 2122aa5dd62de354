-- Migration V16 (after the shared schema.sql): V13's call-ledger rows into
-- the shared request ledger, meaning kept; see the PostgreSQL file for the
-- scope's form. `length(CAST(project AS BLOB))` counts bytes, as Rust's
-- `str::len` does.
INSERT INTO onceq_request_ledger
    (scope, key, fingerprint, token, status, headers, body,
     locked_until, created_at, completed_at, expires_at)
SELECT 'server:' || length(CAST(project AS BLOB)) || ':' || project || ' ' || capability,
       key, fingerprint, token, status,
       CASE WHEN status IS NULL THEN NULL ELSE '[]' END,
       body, locked_until, created_at, completed_at, expires_at
FROM onceq_call_ledger
WHERE true
ON CONFLICT (scope, key) DO NOTHING;

DROP TABLE onceq_call_ledger;
