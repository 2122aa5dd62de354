-- Pushes the lease of a fact we still hold. $1 fact, $2 claim, $3 lease end.
UPDATE onceq_job_facts
   SET locked_until = $3
 WHERE fact = $1 AND claim = $2 AND state = 'running'
