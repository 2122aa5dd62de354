-- Same number as the PostgreSQL V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue"), and a queue's
-- retry backoff (`rules::backoff`, NULL in all four columns: none). SQLite
-- cannot add a table constraint, so the last column's CHECK holds the four
-- together.
ALTER TABLE onceq_queues ADD COLUMN paused INTEGER NOT NULL DEFAULT 0
    CHECK (paused IN (0, 1));
ALTER TABLE onceq_queues ADD COLUMN retry_backoff_initial_seconds INTEGER
    CHECK (retry_backoff_initial_seconds BETWEEN 1 AND 604800);
ALTER TABLE onceq_queues ADD COLUMN retry_backoff_multiplier REAL
    CHECK (retry_backoff_multiplier BETWEEN 1 AND 10);
ALTER TABLE onceq_queues ADD COLUMN retry_backoff_max_seconds INTEGER
    CHECK (retry_backoff_max_seconds BETWEEN 1 AND 604800);
ALTER TABLE onceq_queues ADD COLUMN retry_backoff_jitter REAL
    CHECK (retry_backoff_jitter BETWEEN 0 AND 1)
    CHECK (
        (retry_backoff_initial_seconds IS NULL AND retry_backoff_multiplier IS NULL
         AND retry_backoff_max_seconds IS NULL AND retry_backoff_jitter IS NULL)
        OR (retry_backoff_initial_seconds IS NOT NULL AND retry_backoff_multiplier IS NOT NULL
            AND retry_backoff_max_seconds >= retry_backoff_initial_seconds
            AND retry_backoff_jitter IS NOT NULL)
    );
