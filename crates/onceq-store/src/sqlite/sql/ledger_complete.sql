-- Records the answer of the claim named ?4, if the entry still carries it.
-- ?1 project, ?2 capability, ?3 key, ?4 token, ?5 status, ?6 body, ?7 now
UPDATE onceq_call_ledger
SET status = ?5, body = ?6, locked_until = NULL, completed_at = ?7
WHERE project = ?1 AND capability = ?2 AND key = ?3 AND token = ?4
  AND status IS NULL
