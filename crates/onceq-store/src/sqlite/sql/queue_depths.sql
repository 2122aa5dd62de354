-- Every queue's depth by state, for /metrics. Never scans the backlog's
-- rows: each count walks one queue's range of a covering partial index
-- (onceq_messages_available / _delayed), the oldest message is one probe of
-- (queue_id, seq), and only in-flight rows (bounded by consumers, not by the
-- backlog) are read through onceq_messages_leased to learn their queue. A
-- due delayed message counts as available, as in queue_stats.sql.
SELECT q.id, q.project, q.name, q.dead_letter_queue_id,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'available'),
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at <= ?1),
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at > ?1),
       coalesce(f.in_flight, 0),
       (SELECT m.created_at FROM onceq_messages m
        WHERE m.queue_id = q.id ORDER BY m.seq LIMIT 1)
FROM onceq_queues q
LEFT JOIN (
    SELECT queue_id, count(*) AS in_flight
    FROM onceq_messages
    WHERE state = 'in_flight'
    GROUP BY queue_id
) f ON f.queue_id = q.id
ORDER BY q.project, q.name
