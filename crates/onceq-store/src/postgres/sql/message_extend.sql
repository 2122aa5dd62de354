-- `current` is the lease as it was (reported when we may not extend it);
-- `extended` is the new end, only when the lease is held (under the receipt,
-- if one is given). The UPDATE re-checks its row under lock.
WITH current AS (
    SELECT m.id, m.lease_expires_at
    FROM onceq_messages m
    JOIN onceq_queues q ON q.id = m.queue_id
    WHERE q.project = $1 AND q.name = $2 AND m.id = $3 AND m.state = 'in_flight'
), extended AS (
    UPDATE onceq_messages m
    SET lease_expires_at = $5
    FROM current
    WHERE m.id = current.id
      AND m.state = 'in_flight'
      AND ($4::text IS NULL OR m.receipt = $4)
    RETURNING m.lease_expires_at
)
SELECT (SELECT lease_expires_at FROM extended) AS extended,
       (SELECT lease_expires_at FROM current) AS current
