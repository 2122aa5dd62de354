-- Same number as the PostgreSQL V14, which says why: the index a page of
-- `Store::finished_list` walks, replacing V10's on queue_id alone.
CREATE INDEX onceq_finished_queue_newest ON onceq_finished (queue_id, finished_at, id);
DROP INDEX onceq_finished_queue;
