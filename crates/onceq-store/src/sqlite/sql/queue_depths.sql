-- Every queue's depth by state, for /metrics, without reading the
-- backlog's rows: what a queue holds is counted on the covering index
-- (queue_id, seq); only delayed messages not yet due and in-flight ones
-- (found through their partial indexes) are looked up, and
-- available = held - in flight - delayed not yet due (a due delayed message
-- counts as available, as in queue_stats.sql: `rules::visibility::reported`).
-- The oldest message is one probe of (queue_id, seq).
SELECT q.id, q.project, q.name, q.dead_letter_queue_id,
       (SELECT count(*) FROM onceq_messages m
        WHERE m.queue_id = q.id),
       (SELECT count(*) FROM onceq_messages m INDEXED BY onceq_messages_delayed
        WHERE m.queue_id = q.id AND m.state = 'delayed' AND m.visible_at > ?1),
       coalesce(f.in_flight, 0),
       (SELECT m.created_at FROM onceq_messages m
        WHERE m.queue_id = q.id ORDER BY m.seq LIMIT 1),
       q.paused
FROM onceq_queues q
LEFT JOIN (
    SELECT queue_id, count(*) AS in_flight
    FROM onceq_messages INDEXED BY onceq_messages_leased
    WHERE state = 'in_flight'
    GROUP BY queue_id
) f ON f.queue_id = q.id
ORDER BY q.project, q.name
