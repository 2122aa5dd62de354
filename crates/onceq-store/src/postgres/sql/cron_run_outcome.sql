UPDATE onceq_cron_runs SET outcome = $3, error = $4
WHERE job_id = $1 AND scheduled_at = $2
