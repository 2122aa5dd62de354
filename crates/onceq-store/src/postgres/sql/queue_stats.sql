-- A delayed message whose time has come counts as available
-- (`rules::visibility::reported`, src/rules/visibility.rs): the next claim
-- promotes it, so for the caller it is.
SELECT q.name, q.paused,
       d.name AS dead_letter_queue,
       count(m.id) FILTER (WHERE m.state = 'available'
                              OR (m.state = 'delayed' AND m.visible_at <= $3)) AS available,
       count(m.id) FILTER (WHERE m.state = 'delayed' AND m.visible_at > $3) AS delayed,
       count(m.id) FILTER (WHERE m.state = 'in_flight') AS in_flight,
       min(m.created_at) AS oldest,
       (SELECT count(*) FROM onceq_messages x
        WHERE x.queue_id = q.dead_letter_queue_id) AS dead_lettered
FROM onceq_queues q
LEFT JOIN onceq_queues d ON d.id = q.dead_letter_queue_id
LEFT JOIN onceq_messages m ON m.queue_id = q.id
WHERE q.project = $1 AND q.name = $2
GROUP BY q.id, d.name
