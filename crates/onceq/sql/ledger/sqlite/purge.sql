-- Deletes up to ?2 entries past their retention (?1 = now), in batches so
-- the single writer lock is never held long.
DELETE FROM onceq_request_ledger
WHERE rowid IN (
    SELECT rowid FROM onceq_request_ledger WHERE expires_at <= ?1 LIMIT ?2
)
