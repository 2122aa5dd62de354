-- Deletes up to $2 entries past their retention ($1 = now). Batched so a
-- large backlog never holds many row locks in one transaction.
DELETE FROM onceq_request_ledger
WHERE ctid IN (
    SELECT ctid FROM onceq_request_ledger
    WHERE expires_at <= $1
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
