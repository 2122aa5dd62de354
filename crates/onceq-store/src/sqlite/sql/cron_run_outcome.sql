-- How a task run's delivery ended. The delivery may end before the firing
-- server has recorded the run (the dispatcher is quick), so this inserts
-- the run when it is not there yet; the advance then fills in its firing
-- (cron_run_insert) and keeps this outcome.
INSERT INTO onceq_cron_runs (job_id, scheduled_at, fired_at, message_id, outcome, error)
SELECT ?1, ?2, ?5, ?6, ?3, ?4
WHERE EXISTS (SELECT 1 FROM onceq_cron_jobs WHERE id = ?1)
ON CONFLICT (job_id, scheduled_at) DO UPDATE SET outcome = excluded.outcome, error = excluded.error
