-- How many of the queue's newest messages a payload search read: counts
-- at most ?2 rows of onceq_messages_queue (queue_id, seq), so a result of
-- ?2 says the queue holds more than the search's bound (?2 = bound + 1).
-- ?1 queue id, ?2 bound + 1.
SELECT count(*) FROM (
    SELECT 1 FROM onceq_messages WHERE queue_id = ?1 ORDER BY seq DESC LIMIT ?2
) r
