-- Forgets done facts finished before $1. Returns the count.
DELETE FROM onceq_job_facts
 WHERE state = 'done' AND finished_at < $1
