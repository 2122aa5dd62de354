-- Ends the lease; $2 is 'available', or 'delayed' until $3. $4 the
-- history with this hand-out appended, $5 the last error (rules::attempts).
UPDATE onceq_messages
SET state = $2, visible_at = $3, receipt = NULL, lease_expires_at = NULL,
    consumed_at = NULL, attempts = $4, last_error = $5
WHERE id = $1
