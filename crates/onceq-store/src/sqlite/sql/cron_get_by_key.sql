SELECT id, project, name, cron_expr, run_at, timezone, queue, task_url, payload, headers, max_runs, overlap_policy, next_run_at, run_count, last_message_id, paused, created_at
FROM onceq_cron_jobs
WHERE project = ?1 AND idempotency_key = ?2
