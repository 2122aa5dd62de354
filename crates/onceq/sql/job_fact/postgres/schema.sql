-- The worker's job facts (docs/state-machines.md, "A job fact").
-- Run inside a transaction: the advisory lock makes concurrent first starts
-- of many workers safe (a bare CREATE TABLE IF NOT EXISTS can still fail
-- with a unique violation on pg_type when two sessions race).
SELECT pg_advisory_xact_lock(hashtext('onceq_job_facts'));

CREATE TABLE IF NOT EXISTS onceq_job_facts (
    fact         text        PRIMARY KEY,
    state        text        NOT NULL CHECK (state IN ('running', 'done')),
    -- The worker that holds (or finished) the fact, for operators.
    owner        text        NOT NULL,
    -- Names one attempt: a worker may hold two messages of the same fact,
    -- so "mine" is decided by this token, never by the worker id alone.
    claim        text        NOT NULL,
    -- While running: the holder's lease; after it passes, anyone may take
    -- the fact over. Pushed forward by the holder's heartbeat.
    locked_until timestamptz NOT NULL,
    attempts     integer     NOT NULL DEFAULT 1 CHECK (attempts >= 1),
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    CHECK ((state = 'done') = (finished_at IS NOT NULL))
);
