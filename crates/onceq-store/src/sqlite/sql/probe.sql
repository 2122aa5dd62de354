-- The readiness probe's write (see migrations/V8__probe.sql): the one row,
-- set to the probe's time.
INSERT INTO onceq_probe (id, probed_at) VALUES (1, ?1)
ON CONFLICT (id) DO UPDATE SET probed_at = excluded.probed_at
