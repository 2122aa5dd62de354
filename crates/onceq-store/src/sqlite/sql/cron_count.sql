-- How many schedules a project has (paused and ended ones included); the
-- writer thread serialises inserts, so the count and the insert cannot race.
SELECT count(*) FROM onceq_cron_jobs WHERE project = ?1
