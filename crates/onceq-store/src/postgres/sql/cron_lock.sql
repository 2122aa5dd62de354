-- Serialises schedule creations of one project until the transaction
-- ends, so two cannot both pass the project's cap (cron_count.sql).
SELECT pg_advisory_xact_lock(hashtextextended('onceq_cron:' || $1, 0))
