-- message_ack.sql for a whole group of acks, in one statement: the
-- messages named, each deleted if it is in flight in the queue an ack of
-- the group names, under that ack's receipt when it gives one. Returns each
-- deleted message with its queue and receipt, for the caller to tell which
-- ack deleted it (two acks of one message: one of them).
--
-- Runs under a generic plan with sequential scans priced out (sql.rs,
-- HOT_BEGIN), written so that the only way in is the primary key,
-- `id = ANY($3)`: the messages table is not joined (a generic plan made on
-- empty tables walked a whole index to join it), and `state` is compared
-- with a parameter ($5, 'in_flight') so that no partial index can be
-- walked instead. Each candidate is checked against the group's acks in the
-- EXISTS, the queue probed by name per ack.
DELETE FROM onceq_messages m
WHERE m.id = ANY($3::text[])
  AND m.state = $5::text
  AND EXISTS (
      SELECT 1
      FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS n(project, queue, id, receipt)
      CROSS JOIN LATERAL (SELECT q.id FROM onceq_queues q
                          WHERE q.project = n.project AND q.name = n.queue
                          OFFSET 0) q
      WHERE n.id = m.id
        AND q.id = m.queue_id
        AND (n.receipt IS NULL OR n.receipt = m.receipt)
      -- Kept a per-candidate check: pulled up into a join, it let the
      -- planner walk a whole index of messages to join them.
      OFFSET 0)
RETURNING m.id, m.receipt, m.consumed_at,
          (SELECT q.project FROM onceq_queues q WHERE q.id = m.queue_id) AS project,
          (SELECT q.name FROM onceq_queues q WHERE q.id = m.queue_id) AS queue
