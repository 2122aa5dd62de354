-- Wherever the message is now (it may have been dead-lettered).
SELECT state, visible_at, delivery_count FROM onceq_messages WHERE id = ?1
