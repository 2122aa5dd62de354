-- Finished messages whose time is up, through the expiry index, at most
-- $2 per statement (the purger goes again while a pass is full).
DELETE FROM onceq_finished
WHERE id IN (SELECT id FROM onceq_finished WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)
