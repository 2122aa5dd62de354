-- Redrive into a FIFO queue, step 2, one message at a time, oldest first:
-- appended at its group's tail with a fresh seq, as a publish would be
-- (above every seq the table has, or ever had: AUTOINCREMENT's counter), so
-- it never jumps ahead of a head that may be in flight. A dead letter that
-- never had a group joins `default`.
UPDATE onceq_messages
SET seq = 1 + max(coalesce((SELECT max(seq) FROM onceq_messages), 0),
                  coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'onceq_messages'), 0)),
    queue_id = ?2, state = 'available', delivery_count = 0, visible_at = ?3,
    receipt = NULL, lease_expires_at = NULL, priority = 0,
    group_id = coalesce(group_id, 'default')
WHERE seq = ?1
