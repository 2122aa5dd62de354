-- Serialises registrations of one project until the transaction ends.
SELECT pg_advisory_xact_lock(hashtextextended('onceq_webhooks:' || $1, 0))
