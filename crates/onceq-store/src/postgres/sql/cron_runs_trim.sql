-- Keeps a schedule's 20 newest runs.
DELETE FROM onceq_cron_runs
WHERE job_id = $1
  AND scheduled_at < (SELECT scheduled_at FROM onceq_cron_runs
                      WHERE job_id = $1
                      ORDER BY scheduled_at DESC
                      OFFSET 19 LIMIT 1)
