-- Cron schedules and their runs. Mirrors the PostgreSQL V12 (see there for
-- how a tick is fired once). Timestamps are INTEGER microseconds.
CREATE TABLE onceq_cron_jobs (
    id              TEXT PRIMARY KEY,
    project         TEXT NOT NULL REFERENCES onceq_projects (name),
    name            TEXT CHECK (length(CAST(name AS BLOB)) <= 200),
    cron_expr       TEXT CHECK (length(CAST(cron_expr AS BLOB)) BETWEEN 1 AND 255),
    run_at          INTEGER,
    timezone        TEXT NOT NULL,
    queue           TEXT,
    task_url        TEXT CHECK (task_url LIKE 'https://%' OR task_url LIKE 'http://%'),
    payload         TEXT NOT NULL,
    headers         TEXT,
    max_runs        INTEGER CHECK (max_runs BETWEEN 1 AND 1000000000),
    overlap_policy  TEXT NOT NULL CHECK (overlap_policy IN ('allow', 'skip')),
    idempotency_key TEXT,
    next_run_at     INTEGER,
    run_count       INTEGER NOT NULL DEFAULT 0 CHECK (run_count >= 0),
    last_message_id TEXT,
    paused          INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    CHECK ((cron_expr IS NULL) <> (run_at IS NULL)),
    CHECK ((queue IS NULL) <> (task_url IS NULL))
);

CREATE INDEX onceq_cron_jobs_due ON onceq_cron_jobs (next_run_at)
    WHERE NOT paused AND next_run_at IS NOT NULL;
CREATE INDEX onceq_cron_jobs_project ON onceq_cron_jobs (project, created_at, id);
CREATE UNIQUE INDEX onceq_cron_jobs_idempotency ON onceq_cron_jobs (project, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE onceq_cron_runs (
    job_id       TEXT NOT NULL REFERENCES onceq_cron_jobs (id) ON DELETE CASCADE,
    scheduled_at INTEGER NOT NULL,
    fired_at     INTEGER NOT NULL,
    message_id   TEXT,
    outcome      TEXT NOT NULL CHECK (outcome IN ('published', 'skipped', 'delivered', 'failed')),
    error        TEXT CHECK (length(CAST(error AS BLOB)) <= 8192),
    PRIMARY KEY (job_id, scheduled_at)
);
