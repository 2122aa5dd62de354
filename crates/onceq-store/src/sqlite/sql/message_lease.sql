-- ?4: when this lease begins (its attempt's consumed_at, rules::attempts).
UPDATE onceq_messages
SET state = 'in_flight',
    delivery_count = delivery_count + 1,
    receipt = ?2,
    lease_expires_at = ?3,
    consumed_at = ?4
WHERE seq = ?1
RETURNING id, payload, delivery_count, created_at, idempotency_key, headers
