-- Messages of queue ?1 in flight now (a queue with max_in_flight only):
-- the partial index on leased messages, filtered by queue.
SELECT count(*)
FROM onceq_messages INDEXED BY onceq_messages_leased
WHERE queue_id = ?1 AND state = 'in_flight'
