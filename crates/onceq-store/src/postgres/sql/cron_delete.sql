DELETE FROM onceq_cron_jobs WHERE project = $1 AND id = $2
