-- Same number as the SQLite V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue"), and a queue's
-- retry backoff (`rules::backoff`, NULL in all four columns: none). Constant
-- defaults and NULLs, so this ALTER rewrites no rows.
ALTER TABLE onceq_queues
    ADD COLUMN paused boolean NOT NULL DEFAULT false,
    ADD COLUMN retry_backoff_initial_seconds integer
        CHECK (retry_backoff_initial_seconds BETWEEN 1 AND 604800),
    ADD COLUMN retry_backoff_multiplier double precision
        CHECK (retry_backoff_multiplier BETWEEN 1 AND 10),
    ADD COLUMN retry_backoff_max_seconds integer
        CHECK (retry_backoff_max_seconds BETWEEN 1 AND 604800),
    ADD COLUMN retry_backoff_jitter double precision
        CHECK (retry_backoff_jitter BETWEEN 0 AND 1),
    ADD CONSTRAINT onceq_queues_retry_backoff_whole CHECK (
        (retry_backoff_initial_seconds IS NULL AND retry_backoff_multiplier IS NULL
         AND retry_backoff_max_seconds IS NULL AND retry_backoff_jitter IS NULL)
        OR (retry_backoff_initial_seconds IS NOT NULL AND retry_backoff_multiplier IS NOT NULL
            AND retry_backoff_max_seconds >= retry_backoff_initial_seconds
            AND retry_backoff_jitter IS NOT NULL)
    );
