-- Back to its queue; seq is kept, so it keeps its place in publish order.
-- ?4 the history with this hand-out appended, ?5 the last error
-- (rules::attempts).
UPDATE onceq_messages
SET state = ?2, visible_at = ?3, receipt = NULL, lease_expires_at = NULL,
    consumed_at = NULL, attempts = ?4, last_error = ?5
WHERE seq = ?1
