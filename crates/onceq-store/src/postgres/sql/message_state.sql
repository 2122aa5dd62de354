-- Why a single-message change did nothing: in flight, or not there.
SELECT state FROM onceq_messages WHERE id = $2 AND queue_id = $1
