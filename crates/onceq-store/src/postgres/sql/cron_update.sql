UPDATE onceq_cron_jobs
SET name = $3, cron_expr = $4, run_at = $5, timezone = $6, queue = $7, task_url = $8,
    payload = $9, headers = $10, max_runs = $11, overlap_policy = $12, next_run_at = $13,
    updated_at = $14
WHERE project = $1 AND id = $2
RETURNING id, project, name, cron_expr, run_at, timezone, queue, task_url, payload, headers, max_runs, overlap_policy, next_run_at, run_count, last_message_id, paused, created_at
