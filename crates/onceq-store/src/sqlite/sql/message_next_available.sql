SELECT seq
FROM onceq_messages
WHERE queue_id = ?1 AND state = 'available'
ORDER BY priority DESC, seq
LIMIT ?2
