DELETE FROM onceq_messages WHERE seq = ?1
