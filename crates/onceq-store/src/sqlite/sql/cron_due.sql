-- Due schedules of every project, earliest first (the partial index).
SELECT id, project, name, cron_expr, run_at, timezone, queue, task_url, payload, headers, max_runs, overlap_policy, next_run_at, run_count, last_message_id, paused, created_at
FROM onceq_cron_jobs
WHERE NOT paused AND next_run_at IS NOT NULL AND next_run_at <= ?1
ORDER BY next_run_at
LIMIT ?2
