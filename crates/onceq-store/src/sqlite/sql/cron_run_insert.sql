INSERT INTO onceq_cron_runs (job_id, scheduled_at, fired_at, message_id, outcome, error)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (job_id, scheduled_at) DO NOTHING
