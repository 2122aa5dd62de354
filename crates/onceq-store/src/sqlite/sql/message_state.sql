-- A message of a queue: its seq (what the FIFO redrive moves by) and its
-- state (why a single-message change did nothing).
SELECT seq, state FROM onceq_messages WHERE id = ?2 AND queue_id = ?1
