-- A project's live call-ledger entries: its scopes are the key range
-- [$1, $2) (rules/ledger.rs; "C" collation, so a primary-key range), live
-- means still in their window at $3. At most $4 rows are read, so the cost
-- is bounded by the bound, not by the table. octet_length() of a bytea
-- reads its stored size, not its TOASTed value.
SELECT count(*) AS entries,
       coalesce(sum(octet_length(body)), 0)::bigint AS bytes,
       min(expires_at) AS first_expiry
FROM (
    SELECT body, expires_at FROM onceq_request_ledger
    WHERE scope >= $1 AND scope < $2 AND expires_at > $3
    LIMIT $4
) AS live
