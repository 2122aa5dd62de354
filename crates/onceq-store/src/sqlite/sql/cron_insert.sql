-- A new schedule; with an idempotency key the project already used,
-- nothing (the caller then reads that schedule: cron_get_by_key).
INSERT INTO onceq_cron_jobs (id, project, name, cron_expr, run_at, timezone, queue, task_url,
                             payload, headers, max_runs, overlap_policy, idempotency_key,
                             next_run_at, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15)
ON CONFLICT (project, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
