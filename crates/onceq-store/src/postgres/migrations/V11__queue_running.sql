-- Same number as the SQLite V11.
-- Running a queue (queue-api-2.md §6): a paused queue stores publishes and
-- hands nothing out (docs/state-machines.md, "A queue"), and a queue's
-- retry backoff (`rules::backoff`, NULL in all four columns: none), and its
-- hand-out limits (`rules::limits`): max_in_flight, rate_per_sec and the
-- rate's token bucket (tokens as of rate_refilled_at; NULL: full). Constant
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
    ADD COLUMN max_in_flight integer CHECK (max_in_flight BETWEEN 1 AND 100000),
    ADD COLUMN rate_per_sec double precision
        CHECK (rate_per_sec >= 0.01 AND rate_per_sec <= 100000),
    ADD COLUMN rate_tokens double precision,
    ADD COLUMN rate_refilled_at timestamptz,
    ADD CONSTRAINT onceq_queues_rate_bucket CHECK (
        (rate_tokens IS NULL) = (rate_refilled_at IS NULL)
        AND (rate_per_sec IS NOT NULL OR rate_tokens IS NULL)
    ),
    ADD CONSTRAINT onceq_queues_retry_backoff_whole CHECK (
        (retry_backoff_initial_seconds IS NULL AND retry_backoff_multiplier IS NULL
         AND retry_backoff_max_seconds IS NULL AND retry_backoff_jitter IS NULL)
        OR (retry_backoff_initial_seconds IS NOT NULL AND retry_backoff_multiplier IS NOT NULL
            AND retry_backoff_max_seconds >= retry_backoff_initial_seconds
            AND retry_backoff_jitter IS NOT NULL)
    );
