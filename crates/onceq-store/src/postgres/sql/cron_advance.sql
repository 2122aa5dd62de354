-- Moves a schedule past the tick $2 only while that is still its next
-- tick: of two servers firing one tick, one moves it.
UPDATE onceq_cron_jobs
SET next_run_at = $3,
    run_count = run_count + $4,
    last_message_id = COALESCE($5, last_message_id),
    updated_at = $6
WHERE id = $1 AND next_run_at = $2
