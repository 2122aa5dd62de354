-- Takes back messages this transaction inserted for publishes that then
-- failed (a key of the batch reused with another payload): a failed publish
-- stores nothing.
DELETE FROM onceq_messages WHERE id = ANY($1::text[])
