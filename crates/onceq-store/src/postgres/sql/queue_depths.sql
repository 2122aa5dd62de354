-- Every queue's depth by state, for /metrics, without reading the
-- backlog's rows: what a queue holds is counted by an index-only scan of
-- (queue_id, seq) (the table is visited only for pages changed since the
-- last vacuum); only delayed messages not yet due and in-flight ones are
-- counted through their partial indexes, and
-- available = held - in flight - delayed not yet due (a due delayed message
-- counts as available, as in queue_stats.sql: `rules::visibility::reported`).
-- The oldest message is one probe of (queue_id, seq). Ordered by bytes,
-- like SQLite.
SELECT q.id, q.project, q.name, q.dead_letter_queue_id,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id) AS held,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at > $1) AS delayed,
       coalesce(f.in_flight, 0) AS in_flight,
       (SELECT m.created_at FROM onceq_messages m
        WHERE m.queue_id = q.id ORDER BY m.seq LIMIT 1) AS oldest,
       q.paused
FROM onceq_queues q
LEFT JOIN (
    SELECT queue_id, count(*) AS in_flight
    FROM onceq_messages
    WHERE state = 'in_flight'
    GROUP BY queue_id
) f ON f.queue_id = q.id
ORDER BY q.project COLLATE "C", q.name COLLATE "C"
