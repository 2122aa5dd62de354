-- Same number as the PostgreSQL V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue").
ALTER TABLE onceq_queues ADD COLUMN paused INTEGER NOT NULL DEFAULT 0
    CHECK (paused IN (0, 1));
