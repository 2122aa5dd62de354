DELETE FROM onceq_messages
WHERE id = $1
