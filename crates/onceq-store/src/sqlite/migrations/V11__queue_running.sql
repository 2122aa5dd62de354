-- Same number as the PostgreSQL V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue"), and a queue's
-- retry backoff (`rules::backoff`, NULL in all four columns: none), and its
-- hand-out limits (`rules::limits`): max_in_flight, rate_per_sec and the
-- rate's token bucket (tokens as of rate_refilled_at; NULL: full). SQLite
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
ALTER TABLE onceq_queues ADD COLUMN max_in_flight INTEGER
    CHECK (max_in_flight BETWEEN 1 AND 100000);
ALTER TABLE onceq_queues ADD COLUMN rate_per_sec REAL
    CHECK (rate_per_sec >= 0.01 AND rate_per_sec <= 100000);
ALTER TABLE onceq_queues ADD COLUMN rate_tokens REAL;
ALTER TABLE onceq_queues ADD COLUMN rate_refilled_at INTEGER
    CHECK (
        (rate_tokens IS NULL) = (rate_refilled_at IS NULL)
        AND (rate_per_sec IS NOT NULL OR rate_tokens IS NULL)
    );
