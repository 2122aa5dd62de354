-- Deletes up to ?2 entries past their window (?1 = now), in batches so the
-- single writer is never held long.
DELETE FROM onceq_call_ledger
WHERE rowid IN (
    SELECT rowid FROM onceq_call_ledger WHERE expires_at <= ?1 LIMIT ?2
)
