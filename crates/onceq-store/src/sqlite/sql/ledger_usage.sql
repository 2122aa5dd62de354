-- A project's call-ledger usage (?1): its counters, kept by migration
-- V19's triggers. No row: the project keeps nothing.
SELECT entries, bytes FROM onceq_ledger_usage WHERE project = ?1
