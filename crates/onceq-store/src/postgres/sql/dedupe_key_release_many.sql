-- Gives back keys this transaction took for publishes that then failed (a
-- later key of the same batch was reused with another payload): the failed
-- publish stores nothing, its keys included. Matching the message id we
-- wrote makes sure only our own takes are removed.
DELETE FROM onceq_dedupe_keys k
USING unnest($1::int8[], $2::text[], $3::text[]) AS n(queue_id, key, message_id)
WHERE k.queue_id = n.queue_id AND k.key = n.key AND k.message_id = n.message_id
