-- Same number as the PostgreSQL V5.
-- The dashboard finds a queue's messages by idempotency key
-- (`Store::message_list` with a search, docs/dashboard.md) through this
-- index instead of scanning the backlog. Partial: messages published
-- without a key cost nothing; a keyed message costs one more index entry.
-- The id half of a search uses the id's own unique index.
CREATE INDEX onceq_messages_idempotency ON onceq_messages (queue_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
