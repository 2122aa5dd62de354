-- A delayed message whose time has come counts as available
-- (`rules::visibility::reported`, src/rules/visibility.rs): the next claim
-- promotes it, so for the caller it is.
--
-- Reads the queue's own messages and no others: the counts are a LATERAL
-- aggregate over the queue's rows, probed by queue id, and the dead-letter
-- count one probe more. Run under the hot settings (queues.rs): the
-- planner prices a queue's share of the table as an even split between the
-- queues it knows of, so it scanned the whole table beside a big backlog
-- in another queue, and the GROUP BY this replaces was estimated costly
-- enough for JIT to compile it (0.6 s per call beside 100 000 waiting,
-- docs/performance.md, session 27).
SELECT q.name, q.paused,
       d.name AS dead_letter_queue,
       c.available, c.delayed, c.in_flight, c.oldest,
       (SELECT count(*) FROM onceq_messages x
        WHERE x.queue_id = q.dead_letter_queue_id) AS dead_lettered
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE m.state = 'available'
                               OR (m.state = 'delayed' AND m.visible_at <= $3)) AS available,
           count(*) FILTER (WHERE m.state = 'delayed' AND m.visible_at > $3) AS delayed,
           count(*) FILTER (WHERE m.state = 'in_flight') AS in_flight,
           min(m.created_at) AS oldest
    FROM onceq_messages m
    WHERE m.queue_id = q.id
) c
WHERE q.project = $1 AND q.name = $2
