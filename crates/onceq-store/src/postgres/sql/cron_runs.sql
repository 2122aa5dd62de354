-- A schedule's recent runs, newest first (its primary key's order).
SELECT scheduled_at, fired_at, message_id, outcome, error
FROM onceq_cron_runs
WHERE job_id = $1
ORDER BY scheduled_at DESC
LIMIT 20
