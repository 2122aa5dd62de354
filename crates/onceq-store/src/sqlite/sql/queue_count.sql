SELECT count(*) FROM onceq_messages WHERE queue_id = ?1
