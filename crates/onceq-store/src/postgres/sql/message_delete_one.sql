-- One message of a queue, unless it is in flight: its holder keeps it.
DELETE FROM onceq_messages
WHERE id = $2 AND queue_id = $1 AND state <> 'in_flight'
