-- A project's live call-ledger entries: its scopes are the key range
-- [?1, ?2) (rules/ledger.rs), live means still in their window at ?3. At
-- most ?4 rows are read (the primary key's range), so the cost is bounded
-- by the bound, not by the table. length() of a BLOB reads its size, not
-- its pages.
SELECT count(*), coalesce(sum(length(body)), 0), min(expires_at)
FROM (
    SELECT body, expires_at FROM onceq_request_ledger
    WHERE scope >= ?1 AND scope < ?2 AND expires_at > ?3
    LIMIT ?4
)
