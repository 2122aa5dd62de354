-- When the first of a project's ($1) live entries (window not over at $2)
-- ends: one probe of onceq_request_ledger_server_expiry (migration V19).
SELECT expires_at FROM onceq_request_ledger
WHERE scope LIKE 'server:%'
  AND onceq_ledger_project(scope) = $1
  AND expires_at > $2
ORDER BY expires_at
LIMIT 1
