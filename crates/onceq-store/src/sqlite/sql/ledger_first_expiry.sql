-- When the first of a project's (?1) live entries (window not over at ?2)
-- ends: one probe of onceq_request_ledger_server_expiry (migration V19),
-- which only this very expression of the project reaches.
SELECT expires_at FROM onceq_request_ledger
WHERE substr(scope, 1, 7) = 'server:'
  AND CAST(substr(CAST(scope AS BLOB), 8 + instr(substr(scope, 8), ':'), CAST(substr(scope, 8, instr(substr(scope, 8), ':') - 1) AS INTEGER)) AS TEXT) = ?1
  AND expires_at > ?2
ORDER BY expires_at
LIMIT 1
