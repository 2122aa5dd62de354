-- message_ack.sql for a whole group of acks, in one statement. Two acks of
-- one message: the row is deleted once, and only one of them is returned.
-- Runs under a generic plan
-- (sql.rs, GROUP_BEGIN): the queue and the message are each probed by
-- index per ack. Returns the positions (1-based) of the acks that deleted
-- their message.
DELETE FROM onceq_messages m
USING unnest($1::text[], $2::text[], $3::text[], $4::text[])
      WITH ORDINALITY AS n(project, queue, id, receipt, ord)
CROSS JOIN LATERAL (SELECT q.id FROM onceq_queues q
                    WHERE q.project = n.project AND q.name = n.queue
                    OFFSET 0) q
WHERE m.id = n.id
  AND m.queue_id = q.id
  AND m.state = 'in_flight'
  AND (n.receipt IS NULL OR m.receipt = n.receipt)
RETURNING n.ord
