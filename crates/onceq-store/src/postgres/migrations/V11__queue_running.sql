-- Same number as the SQLite V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue"). A constant
-- default, so this ALTER rewrites no rows.
ALTER TABLE onceq_queues ADD COLUMN paused boolean NOT NULL DEFAULT false;
