-- Pause keeps the next tick; resume writes the one the caller computed.
UPDATE onceq_cron_jobs
SET paused = ?3,
    next_run_at = CASE WHEN ?3 THEN next_run_at ELSE ?4 END,
    updated_at = ?5
WHERE project = ?1 AND id = ?2
