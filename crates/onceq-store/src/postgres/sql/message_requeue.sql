-- Ends the lease; $2 is 'available', or 'delayed' until $3.
UPDATE onceq_messages
SET state = $2, visible_at = $3, receipt = NULL, lease_expires_at = NULL
WHERE id = $1
