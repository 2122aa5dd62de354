-- Records the answer of the claim named $3, if the entry still carries it.
-- $1 scope, $2 key, $3 token, $4 status, $5 headers (JSON text), $6 body, $7 now
UPDATE onceq_request_ledger
SET status = $4, headers = $5::text::jsonb, body = $6,
    locked_until = NULL, completed_at = $7
WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL
