-- The entry a claim did not take. $1 scope, $2 key
SELECT fingerprint, status, headers::text, body, locked_until, expires_at
FROM onceq_request_ledger
WHERE scope = $1 AND key = $2
