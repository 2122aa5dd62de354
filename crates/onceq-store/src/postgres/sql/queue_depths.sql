-- Every queue's depth by state, for /metrics. Never scans the backlog's
-- rows: each count walks one queue's entries in a partial index
-- (onceq_messages_available / _delayed; index-only where the visibility map
-- allows), the oldest message is one probe of (queue_id, seq), and only
-- in-flight rows (bounded by consumers, not by the backlog) are read through
-- onceq_messages_leased to learn their queue. A due delayed message counts
-- as available, as in queue_stats.sql. Ordered by bytes, like SQLite.
SELECT q.id, q.project, q.name, q.dead_letter_queue_id,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'available') AS available,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at <= $1) AS due,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at > $1) AS delayed,
       coalesce(f.in_flight, 0) AS in_flight,
       (SELECT m.created_at FROM onceq_messages m
        WHERE m.queue_id = q.id ORDER BY m.seq LIMIT 1) AS oldest
FROM onceq_queues q
LEFT JOIN (
    SELECT queue_id, count(*) AS in_flight
    FROM onceq_messages
    WHERE state = 'in_flight'
    GROUP BY queue_id
) f ON f.queue_id = q.id
ORDER BY q.project COLLATE "C", q.name COLLATE "C"
