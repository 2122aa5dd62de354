-- Claim on a FIFO queue: only a group's head, its lowest seq still in the
-- queue whatever its state, and only while it is available; heads of
-- different groups oldest first (priority is always 0 on a FIFO queue). The
-- writer thread is the only writer, so nothing changes between this SELECT
-- and the leases taken on its rows; the PostgreSQL statement
-- (../../postgres/sql/message_claim.sql) argues the concurrent case.
SELECT m.seq
FROM onceq_messages m
WHERE m.queue_id = ?1 AND m.state = 'available'
  AND NOT EXISTS (
      SELECT 1
      FROM onceq_messages e
      WHERE e.queue_id = m.queue_id AND e.group_id = m.group_id AND e.seq < m.seq
  )
ORDER BY m.priority DESC, m.seq
LIMIT ?2
