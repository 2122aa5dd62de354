-- Claims a job fact for one attempt, in one statement.
-- $1 fact, $2 owner (worker id), $3 claim token, $4 now, $5 lease end.
--
-- Absent → inserted `running` (ours). `running` with an expired lease →
-- taken over (ours, attempts + 1). Anything else is left as it is; the
-- update still runs (as a no-op) so that the row comes back in RETURNING
-- and the caller learns its state from this same statement. A concurrent
-- holder in the middle of its `done` mark holds the row lock: we wait for
-- its COMMIT and then see `done`.
INSERT INTO onceq_job_facts AS f
    (fact, state, owner, claim, locked_until, attempts, started_at)
VALUES ($1, 'running', $2, $3, $5, 1, $4)
ON CONFLICT (fact) DO UPDATE SET
    owner = CASE WHEN f.state = 'running' AND f.locked_until <= $4
                 THEN EXCLUDED.owner ELSE f.owner END,
    claim = CASE WHEN f.state = 'running' AND f.locked_until <= $4
                 THEN EXCLUDED.claim ELSE f.claim END,
    locked_until = CASE WHEN f.state = 'running' AND f.locked_until <= $4
                 THEN EXCLUDED.locked_until ELSE f.locked_until END,
    attempts = CASE WHEN f.state = 'running' AND f.locked_until <= $4
                 THEN f.attempts + 1 ELSE f.attempts END,
    started_at = CASE WHEN f.state = 'running' AND f.locked_until <= $4
                 THEN EXCLUDED.started_at ELSE f.started_at END
RETURNING state, claim = $3 AS mine, owner, locked_until, attempts
