-- Forgets the claim named $4, if the entry still carries it (its request
-- changed nothing, so a retry is a first try).
-- $1 project, $2 capability, $3 key, $4 token
DELETE FROM onceq_call_ledger
WHERE project = $1 AND capability = $2 AND key = $3 AND token = $4
  AND status IS NULL
