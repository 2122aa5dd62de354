-- Oldest first. In-flight messages of the DLQ stay with their holder.
-- ?4 = -1 means no limit.
UPDATE onceq_messages
SET queue_id = ?2, state = 'available', delivery_count = 0, visible_at = ?3,
    receipt = NULL, lease_expires_at = NULL
WHERE seq IN (SELECT seq
              FROM onceq_messages
              WHERE queue_id = ?1 AND state IN ('available', 'delayed')
              ORDER BY seq
              LIMIT ?4)
