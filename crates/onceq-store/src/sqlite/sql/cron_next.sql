-- When the next schedule is due after now: one probe of the partial index.
SELECT min(next_run_at)
FROM onceq_cron_jobs
WHERE NOT paused AND next_run_at IS NOT NULL AND next_run_at > ?1
