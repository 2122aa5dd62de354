-- Redrive into a FIFO queue, step 2, once the groups' locks are held: each
-- message is appended at its group's tail with a fresh seq, as a publish
-- would be, in the order given ($1 oldest first). A moved-in message keeping
-- its old, lower seq would jump ahead of a group's head that may be in flight.
UPDATE onceq_messages m
SET queue_id = $3, state = 'available', visible_at = $4, delivery_count = 0,
    priority = 0, group_id = n.group_id, seq = n.seq
FROM (
    SELECT u.id, u.group_id, nextval(pg_get_serial_sequence('onceq_messages', 'seq')) AS seq
    FROM (SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(id, group_id, ord)
          ORDER BY ord) u
) n
WHERE m.id = n.id
