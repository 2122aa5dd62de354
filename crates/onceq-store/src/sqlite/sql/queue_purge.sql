-- Every message the queue holds, in flight ones included.
DELETE FROM onceq_messages WHERE queue_id = ?1
