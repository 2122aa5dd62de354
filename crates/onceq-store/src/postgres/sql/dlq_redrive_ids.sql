-- `Store::dlq_redrive_many` (and `dlq_redrive_one`, with one id) into a
-- standard queue: the named dead letters back, as dlq_redrive.sql moves
-- each, in one statement. $1 DLQ id, $2 queue id, $3 ids, $4 now. Returns
-- the ids moved and those a consumer of the DLQ holds (they stay with
-- their holder).
WITH moved AS (
    UPDATE onceq_messages
    SET queue_id = $2, state = 'available', visible_at = $4, delivery_count = 0
    WHERE queue_id = $1 AND id = ANY($3::text[]) AND state <> 'in_flight'
    RETURNING id
)
SELECT ARRAY(SELECT id FROM moved) AS done,
       ARRAY(SELECT id FROM onceq_messages
             WHERE queue_id = $1 AND id = ANY($3::text[]) AND state = 'in_flight') AS held
