-- The queues a group of publishes names, by (project, name). A name not
-- returned does not exist yet; the group creates it as a first publish does.
SELECT q.project, q.name, q.id, q.queue_type
FROM unnest($1::text[], $2::text[]) AS n(project, name)
JOIN onceq_queues q ON q.project = n.project AND q.name = n.name
