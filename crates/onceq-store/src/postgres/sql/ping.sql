-- The readiness probe (`PgStore::ping`): whether this connection reaches a
-- server that can write. A standby (in recovery) or a session that is
-- read-only (`default_transaction_read_only`, a primary demoted by
-- hand) answers queries but fails every write, so it is not ready.
SELECT pg_is_in_recovery(), current_setting('transaction_read_only')
