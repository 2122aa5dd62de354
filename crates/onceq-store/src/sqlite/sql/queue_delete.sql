-- Queues using this one as their DLQ lose it (ON DELETE SET NULL).
DELETE FROM onceq_queues WHERE id = ?1
