-- Forgets the claim named $3, if the entry still carries it. $1 scope, $2 key
DELETE FROM onceq_request_ledger
WHERE scope = $1 AND key = $2 AND token = $3 AND status IS NULL
