-- The queues a group of publishes names, by (project, name). A name not
-- returned does not exist yet; the group creates it as a first publish does.
-- Group statements run under a generic plan (see publish_group/mod.rs), so
-- the join is written as a probe of the (project, name) index per name:
-- planned as a join, a generic plan hashes the whole queues table instead.
SELECT q.project, q.name, q.id, q.queue_type
FROM unnest($1::text[], $2::text[]) AS n(project, name)
CROSS JOIN LATERAL (SELECT * FROM onceq_queues q
                    WHERE q.project = n.project AND q.name = n.name
                    OFFSET 0) q
