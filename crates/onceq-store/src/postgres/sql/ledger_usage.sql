-- A project's call-ledger usage ($1): the sum of its counters' slots,
-- kept by migration V19's triggers (a primary-key range of at most 16
-- rows). No row: the project keeps nothing.
SELECT coalesce(sum(entries), 0)::bigint AS entries,
       coalesce(sum(bytes), 0)::bigint AS bytes
FROM onceq_ledger_usage
WHERE project = $1
