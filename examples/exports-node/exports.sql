-- The table the worker writes: one row per export built. Deliberately no
-- unique constraint on job_fact: a duplicated export must show up as a
-- second row, not be hidden by the database (the chaos run counts them).
-- The advisory lock (the Rust example's) makes concurrent starts safe.
SELECT pg_advisory_xact_lock(7061006501);
CREATE TABLE IF NOT EXISTS exports (
    id bigserial PRIMARY KEY,
    job_fact text NOT NULL,
    tenant text,
    format text,
    built_at timestamptz NOT NULL DEFAULT now()
);
