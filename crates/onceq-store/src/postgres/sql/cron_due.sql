-- Due schedules of every project (the partial index), in turns across
-- projects: each project's earliest due first (its turn 1), then each
-- one's second, ...; within a turn, earliest first. At most $3 of one
-- project, $2 in all: one project's many due schedules cannot push
-- another's behind them (maintenance/cron_firing.rs).
SELECT id, project, name, cron_expr, run_at, timezone, queue, task_url, payload, headers, max_runs, overlap_policy, next_run_at, run_count, last_message_id, paused, created_at
FROM (
    SELECT id, project, name, cron_expr, run_at, timezone, queue, task_url, payload, headers, max_runs, overlap_policy, next_run_at, run_count, last_message_id, paused, created_at,
           ROW_NUMBER() OVER (PARTITION BY project ORDER BY next_run_at, id) AS turn
    FROM onceq_cron_jobs
    WHERE NOT paused AND next_run_at IS NOT NULL AND next_run_at <= $1
) due
WHERE turn <= $3
ORDER BY turn, next_run_at, id
LIMIT $2
