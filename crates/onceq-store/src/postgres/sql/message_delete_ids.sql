-- `Store::message_delete_many` (and `message_delete`, with one id): the
-- named messages of one queue deleted unless in flight (their holder keeps
-- them), in one statement. $1 queue id, $2 ids. Returns the ids deleted
-- and those left alone because in flight (read from the statement's
-- snapshot, which the DELETE does not change for them).
WITH gone AS (
    DELETE FROM onceq_messages
    WHERE queue_id = $1 AND id = ANY($2::text[]) AND state <> 'in_flight'
    RETURNING id
)
SELECT ARRAY(SELECT id FROM gone) AS done,
       ARRAY(SELECT id FROM onceq_messages
             WHERE queue_id = $1 AND id = ANY($2::text[]) AND state = 'in_flight') AS held
