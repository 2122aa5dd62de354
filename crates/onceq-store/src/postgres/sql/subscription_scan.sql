-- Every subscription, and whether its queue has a message to hand out at
-- $1: available, or delayed with its time come (the claim promotes those).
-- Two index probes per subscription (onceq_messages_available and
-- onceq_messages_delayed), whatever the queue's depth. OFFSET 0 keeps each
-- EXISTS a correlated probe: the planner could otherwise hash it, reading
-- every message of the table (see publish_group.sql).
SELECT s.id, q.project, q.name AS queue, s.url, s.secret, s.max_in_flight,
       s.timeout_seconds, s.created_at,
       -- A paused queue hands nothing out (queue-api-2.md §6): not due.
       NOT q.paused AND (EXISTS (
           SELECT 1 FROM onceq_messages m
           WHERE m.queue_id = s.queue_id AND m.state = 'available'
           OFFSET 0
       ) OR EXISTS (
           SELECT 1 FROM onceq_messages m
           WHERE m.queue_id = s.queue_id AND m.state = 'delayed' AND m.visible_at <= $1
           OFFSET 0
       )) AS due
FROM onceq_push_subscriptions s
JOIN onceq_queues q ON q.id = s.queue_id
ORDER BY s.created_at, s.id
