-- The rate's token bucket of queue ?1 after a claim: ?2 tokens as of ?3
-- (`rules::limits`).
UPDATE onceq_queues
SET rate_tokens = ?2, rate_refilled_at = ?3
WHERE id = ?1
