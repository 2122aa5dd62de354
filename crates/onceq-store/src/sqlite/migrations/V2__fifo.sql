-- FIFO queues (docs/api.md, "FIFO queues"). Same number as the PostgreSQL V2.
--
-- A group's head is its lowest-seq message in its queue, whatever its
-- state; the claim on a FIFO queue checks "no lower seq in my group" with an
-- index probe here. Only grouped messages are indexed: every message of a
-- FIFO queue has a group (`default` when the publisher gave none).
CREATE INDEX onceq_messages_group ON onceq_messages (queue_id, group_id, seq)
    WHERE group_id IS NOT NULL;
