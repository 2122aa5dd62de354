-- The entry a claim did not take. $1 project, $2 capability, $3 key
SELECT fingerprint, status, body, locked_until, expires_at
FROM onceq_call_ledger
WHERE project = $1 AND capability = $2 AND key = $3
