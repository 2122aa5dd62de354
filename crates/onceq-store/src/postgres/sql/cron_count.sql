-- How many schedules a project has (paused and ended ones included);
-- under the project's advisory lock (cron_lock.sql).
SELECT count(*) FROM onceq_cron_jobs WHERE project = $1
