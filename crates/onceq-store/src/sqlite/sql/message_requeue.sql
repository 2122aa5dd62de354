-- Back to its queue; seq is kept, so it keeps its place in publish order.
UPDATE onceq_messages
SET state = ?2, visible_at = ?3, receipt = NULL, lease_expires_at = NULL
WHERE seq = ?1
