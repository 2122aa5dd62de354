-- Marks a fact done, inside the handler's transaction. $1 fact, $2 claim,
-- $3 now. Zero rows means another worker took the fact over: the caller
-- must roll back. The row lock taken here serialises this against a
-- concurrent takeover (claim.sql) until COMMIT.
UPDATE onceq_job_facts
   SET state = 'done', finished_at = $3
 WHERE fact = $1 AND claim = $2 AND state = 'running'
