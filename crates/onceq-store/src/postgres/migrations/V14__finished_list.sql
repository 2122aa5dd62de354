-- Same number as the SQLite V14.
-- The dashboard lists a queue's kept finished messages newest first,
-- keyset-paged by (finished_at, id) (`Store::finished_list`): this index
-- answers a page as a walk from the cursor. It leads with queue_id, so it
-- also serves what the V10 index on queue_id alone did (a queue's purge,
-- the cascade of its delete), which it replaces.
CREATE INDEX onceq_finished_queue_newest ON onceq_finished (queue_id, finished_at, id);
DROP INDEX onceq_finished_queue;
