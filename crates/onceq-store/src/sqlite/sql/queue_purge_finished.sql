-- The finished messages a purged queue kept.
DELETE FROM onceq_finished WHERE queue_id = ?1
