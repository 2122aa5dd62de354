-- Cron schedules and their runs (docs/api.md, "Cron"; docs/state-machines.md,
-- "A cron schedule"). Same number as the SQLite V12.
--
-- A schedule is fired by whichever server sees it due first: it publishes
-- the run's message with the dedupe key cron:<id>:<scheduled_at>, then
-- advances next_run_at only if it still equals that tick (a compare and
-- set), recording the run in the same transaction. So two servers firing
-- one tick store one message (the second publish is a replay) and one run.
CREATE TABLE onceq_cron_jobs (
    id              text PRIMARY KEY,
    project         text NOT NULL REFERENCES onceq_projects (name),
    name            text CHECK (octet_length(name) <= 200),
    cron_expr       text CHECK (octet_length(cron_expr) BETWEEN 1 AND 255),
    run_at          timestamptz,
    timezone        text NOT NULL,
    queue           text,
    task_url        text CHECK (task_url LIKE 'https://%' OR task_url LIKE 'http://%'),
    payload         text NOT NULL,
    headers         text,
    max_runs        bigint CHECK (max_runs BETWEEN 1 AND 1000000000),
    overlap_policy  text NOT NULL CHECK (overlap_policy IN ('allow', 'skip')),
    idempotency_key text,
    next_run_at     timestamptz,
    run_count       bigint NOT NULL DEFAULT 0 CHECK (run_count >= 0),
    last_message_id text,
    paused          boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    -- a when: an expression or a one-shot time, not both
    CHECK ((cron_expr IS NULL) <> (run_at IS NULL)),
    -- a target: a queue or a task URL, not both
    CHECK ((queue IS NULL) <> (task_url IS NULL))
);

-- the firing loop's probe: unpaused schedules by next tick
CREATE INDEX onceq_cron_jobs_due ON onceq_cron_jobs (next_run_at)
    WHERE NOT paused AND next_run_at IS NOT NULL;
-- a project's schedules, oldest first
CREATE INDEX onceq_cron_jobs_project ON onceq_cron_jobs (project, created_at, id);
-- create's own dedupe
CREATE UNIQUE INDEX onceq_cron_jobs_idempotency ON onceq_cron_jobs (project, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE onceq_cron_runs (
    job_id       text NOT NULL REFERENCES onceq_cron_jobs (id) ON DELETE CASCADE,
    scheduled_at timestamptz NOT NULL,
    fired_at     timestamptz NOT NULL,
    message_id   text,
    outcome      text NOT NULL CHECK (outcome IN ('published', 'skipped', 'delivered', 'failed')),
    error        text CHECK (octet_length(error) <= 8192),
    -- one run per tick, however many servers fired it
    PRIMARY KEY (job_id, scheduled_at)
);
