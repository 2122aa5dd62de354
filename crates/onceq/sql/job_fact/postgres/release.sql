-- Gives up a fact we hold (the work failed or was abandoned), so the next
-- delivery claims it at once. $1 fact, $2 claim.
DELETE FROM onceq_job_facts
 WHERE fact = $1 AND claim = $2 AND state = 'running'
