-- Migration V16 (after the shared schema.sql): V13's call-ledger rows into
-- the shared request ledger, meaning kept. The scope is
-- `server:<bytes of project>:<project> <capability>` (rules/ledger.rs
-- `scope`): the length prefix keeps any two (project, capability) pairs
-- apart, the `server:` prefix keeps them apart from the toolkit's scopes
-- (which start with a digit) in a database both use, and the project
-- stays a scope prefix. The server never recorded headers: `[]` for
-- answered rows, NULL while in flight (the state CHECK wants exactly that).
INSERT INTO onceq_request_ledger
    (scope, key, fingerprint, token, status, headers, body,
     locked_until, created_at, completed_at, expires_at)
SELECT 'server:' || octet_length(project) || ':' || project || ' ' || capability,
       key, fingerprint, token, status,
       CASE WHEN status IS NULL THEN NULL ELSE '[]'::jsonb END,
       body, locked_until, created_at, completed_at, expires_at
FROM onceq_call_ledger
ON CONFLICT (scope, key) DO NOTHING;

DROP TABLE onceq_call_ledger;
