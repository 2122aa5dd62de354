-- Dedupe keys go by cascade; queues dead-lettering into this one are left
-- without a DLQ (ON DELETE SET NULL).
DELETE FROM onceq_queues
WHERE id = $1
