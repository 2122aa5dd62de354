-- message_insert.sql for a message handed straight to a waiting consumer
-- (rules::hand_out): stored in flight, its first delivery under a lease, as
-- message_lease.sql would make it.
-- ?11: its receipt; ?12: its lease's end; ?9 (created_at) its consumed_at.
INSERT INTO onceq_messages (id, queue_id, state, payload, priority, group_id,
                            idempotency_key, visible_at, created_at, headers,
                            delivery_count, receipt, lease_expires_at, consumed_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11, ?12, ?9)
