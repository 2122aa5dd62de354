-- The run of an advanced tick (once per tick: only the advance that won
-- inserts). A task's delivery may have recorded its outcome first
-- (cron_run_outcome): then the firing is filled in and the outcome kept.
INSERT INTO onceq_cron_runs (job_id, scheduled_at, fired_at, message_id, outcome, error)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (job_id, scheduled_at) DO UPDATE SET fired_at = excluded.fired_at, message_id = excluded.message_id
